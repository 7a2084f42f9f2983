//! Each CPU's group key at every level (package, die, cluster, core), from
//! the kernel's ids where they agree with its sibling masks and from the
//! masks otherwise, and the checks that the masks describe one grouping.

use std::collections::HashMap;
use std::rc::Rc;

use cpumask::{CompactMask, CpuMask};

use super::{RawCpu, CLUSTER, CORE, CPU_DIR, DIE, PACKAGE};

/// The files a level's sibling mask is read from, in the reader's order.
const MASK_FILES: [&str; 4] = [
    "package_cpus_list (or core_siblings_list)",
    "die_cpus_list",
    "cluster_cpus_list",
    "core_cpus_list (or thread_siblings_list)",
];

/// Chooses each CPU's group key at every level (package, die, cluster, core).
///
/// The OS ids are used when, on the online CPUs, grouping by them (within the
/// enclosing groups) gives exactly the kernel's sibling masks; otherwise the
/// masks decide and a group is keyed by its first CPU. A level nobody reports is
/// `None`; package and core always exist (one package; one core per CPU).
/// An error names the CPU whose sibling mask contradicts another's.
pub(super) fn group_keys(
    raws: &[RawCpu],
    online: &CpuMask,
) -> Result<Vec<[Option<u32>; 4]>, (u32, String)> {
    let mut keys: Vec<[Option<u32>; 4]> = vec![[None; 4]; raws.len()];
    let mut known = CpuMask::new();
    for r in raws {
        known.set(r.id as usize);
    }
    let online = online.and(&known);
    for level in [PACKAGE, DIE, CLUSTER, CORE] {
        let reported = raws
            .iter()
            .any(|r| r.ids[level].is_some() || r.masks[level].is_some());
        if !reported {
            match level {
                PACKAGE => keys.iter_mut().for_each(|k| k[PACKAGE] = Some(0)),
                CORE => {
                    for (k, r) in keys.iter_mut().zip(raws) {
                        k[CORE] = Some(r.id);
                    }
                }
                _ => {}
            }
            continue;
        }
        if (level == DIE || level == CLUSTER) && !middle_level_is_real(raws, level, &online) {
            continue;
        }
        let ids_usable = raws
            .iter()
            .all(|r| r.ids[level].is_some_and(|v| (0..=u32::MAX as i64).contains(&v)));
        let ids_agree = ids_usable && {
            // Group online CPUs by (enclosing keys, id); every online CPU's
            // mask (on the online CPUs) must then hold exactly its group. The
            // groups are kept as member lists, not 2 KiB masks, and a mask
            // shared (`Rc`) by several members is checked once per group.
            let mut by_id: HashMap<([Option<u32>; 4], i64), Vec<usize>> = HashMap::new();
            for (i, (r, k)) in raws.iter().zip(&keys).enumerate() {
                if online.contains(r.id as usize) {
                    by_id
                        .entry((*k, r.ids[level].unwrap_or(-1)))
                        .or_default()
                        .push(i);
                }
            }
            by_id.values().all(|members| {
                let mut checked: Option<&Rc<CompactMask>> = None;
                members.iter().all(|&i| {
                    let Some(mask) = raws[i].masks[level].as_ref() else {
                        return true;
                    };
                    if checked.is_some_and(|c| Rc::ptr_eq(c, mask)) {
                        return true;
                    }
                    let holds_exactly = mask.and_weight(&online) == members.len()
                        && members.iter().all(|&j| mask.contains(raws[j].id as usize));
                    checked = Some(mask);
                    holds_exactly
                })
            })
        };
        for (r, k) in raws.iter().zip(keys.iter_mut()) {
            k[level] = Some(if ids_agree {
                r.ids[level].unwrap_or(0) as u32
            } else {
                match r.masks[level].as_deref() {
                    Some(m) => {
                        let mut m = m.and(&known);
                        m.set(r.id as usize);
                        m.first().unwrap_or(r.id as usize) as u32
                    }
                    None => r.id,
                }
            });
        }
        if !ids_agree {
            masks_agree(raws, &keys, level, &online)?;
        }
    }
    Ok(keys)
}

/// Checks that the masks `group_keys` grouped `level` by name, on the
/// online CPUs, exactly each CPU's group. The kernel builds every sibling
/// mask from one relation (x86's `link_mask`, arm64's
/// `update_siblings_masks` set both CPUs' bits), so a mask naming a CPU
/// whose own mask does not name it back is a damaged dump (hwloc's
/// `40intel64-4n10c+pci-conflicts` edits one `core_siblings` so), which no
/// grouping reads right: one error naming the CPU.
fn masks_agree(
    raws: &[RawCpu],
    keys: &[[Option<u32>; 4]],
    level: usize,
    online: &CpuMask,
) -> Result<(), (u32, String)> {
    let index_of = |cpu: usize| raws.binary_search_by_key(&cpu, |r| r.id as usize).ok();
    let mut sizes: HashMap<&[Option<u32>], usize> = HashMap::new();
    for (r, k) in raws.iter().zip(keys) {
        if online.contains(r.id as usize) {
            *sizes.entry(&k[..=level]).or_default() += 1;
        }
    }
    let name = ["package", "die", "cluster", "core"][level];
    let on_mask = |i: usize| raws[i].masks[level].as_deref().map(|m| m.and(online));
    // A mask shared (`Rc`) by a group's CPUs is checked once for the group:
    // 16384 CPUs' package masks are otherwise 10^8 bit visits.
    let mut checked: std::collections::HashSet<(*const CompactMask, &[Option<u32>])> =
        std::collections::HashSet::new();
    for (r, k) in raws.iter().zip(keys) {
        let Some(shared) = r.masks[level].as_ref() else {
            continue;
        };
        if !online.contains(r.id as usize) || !checked.insert((Rc::as_ptr(shared), &k[..=level])) {
            continue;
        }
        let on = shared.and(online);
        // A CPU the mask names in another group, or one of this group the
        // mask leaves out.
        let named_elsewhere = on
            .iter()
            .find_map(|c| index_of(c).filter(|&j| keys[j][..=level] != k[..=level]));
        let size = sizes.get(&k[..=level]).copied().unwrap_or(0);
        let left_out = (on.weight() != size)
            .then(|| {
                raws.iter().zip(keys).position(|(o, ok)| {
                    online.contains(o.id as usize)
                        && ok[..=level] == k[..=level]
                        && !on.contains(o.id as usize)
                })
            })
            .flatten();
        if let Some(j) = named_elsewhere.or(left_out) {
            let theirs = on_mask(j).map_or_else(|| "none".to_string(), |m| m.to_list_string());
            // Both CPUs' files: the damage may be in either.
            let file = |cpu: u32| format!("{CPU_DIR}/cpu{cpu}/topology/{}", MASK_FILES[level]);
            return Err((
                r.id,
                format!(
                    "the {name} sibling masks of CPU {} ({}, {}) and CPU {} ({theirs}, {}) \
                     overlap but differ: the kernel writes every such mask from one relation, \
                     so the dump is damaged",
                    r.id,
                    on.to_list_string(),
                    file(r.id),
                    raws[j].id,
                    file(raws[j].id),
                ),
            ));
        }
    }
    Ok(())
}

/// Whether a die or cluster level carries information: some CPU has a real id
/// (architectures without the level print `-1` and a mask of the CPU alone),
/// some group holds more than one CPU, a die level is not the packages again,
/// and,
/// on the online CPUs, every core mask fits in its die/cluster mask, which fits
/// in the package mask. A level that does not nest is dropped rather than
/// allowed to split cores (riscv reports per-CPU "dies" around 2-thread cores).
fn middle_level_is_real(raws: &[RawCpu], level: usize, online: &CpuMask) -> bool {
    if !raws.iter().any(|r| r.ids[level].is_some_and(|v| v >= 0)) {
        return false;
    }
    // Groups of one CPU carry nothing (x86 VMs report `cluster_id` 65535 with
    // the CPU alone as its cluster; hwloc drops single-PU clusters and dies too).
    let single = raws
        .iter()
        .filter(|r| online.contains(r.id as usize))
        .all(|r| {
            r.masks[level]
                .as_deref()
                .is_none_or(|m| m.and_weight(online) <= 1)
        });
    if single {
        return false;
    }
    // A die level whose every die is its package carries nothing either:
    // x86 kernels since 5.3 write die_cpus equal to package_cpus on
    // single-die parts, and hwloc merges such a level into the packages.
    if level == DIE {
        // Masks shared (`Rc`) by a group's CPUs are compared once per pair.
        let mut equal: std::collections::HashSet<(*const CompactMask, *const CompactMask)> =
            std::collections::HashSet::new();
        let same_as_package =
            raws.iter()
                .filter(|r| online.contains(r.id as usize))
                .all(|r| match (&r.masks[DIE], &r.masks[PACKAGE]) {
                    (Some(d), Some(p)) => {
                        let pair = (Rc::as_ptr(d), Rc::as_ptr(p));
                        equal.contains(&pair)
                            || ((Rc::ptr_eq(d, p) || d.and(online) == p.and(online))
                                && equal.insert(pair))
                    }
                    _ => false,
                });
        if same_as_package {
            return false;
        }
    }
    raws.iter()
        .filter(|r| online.contains(r.id as usize))
        .all(|r| {
            let Some(mid) = r.masks[level].as_deref().map(|m| m.and(online)) else {
                return true;
            };
            let inner_ok = r.masks[CORE]
                .as_deref()
                .is_none_or(|c| c.and(online).is_subset(&mid));
            let outer_ok = r.masks[PACKAGE]
                .as_deref()
                .is_none_or(|p| mid.is_subset(&p.and(online)));
            inner_ok && outer_ok
        })
}
