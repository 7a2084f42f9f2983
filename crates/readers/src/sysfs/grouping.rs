//! Each CPU's group key at every level (package, die, cluster, core), from
//! the kernel's ids where they agree with its sibling masks and from the
//! masks otherwise, and the checks that the masks describe one grouping.

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
        // Grouping the online CPUs by (enclosing keys, id), every online
        // CPU's mask (on the online CPUs) must be exactly its group.
        let ids_agree = ids_usable && {
            let groups = Groups::of(raws, &online, |i| (keys[i], raws[i].ids[level]));
            groups.first_mismatch(raws, level).is_none()
        };
        for (r, k) in raws.iter().zip(keys.iter_mut()) {
            k[level] = Some(if ids_agree {
                r.ids[level].unwrap_or(0) as u32
            } else {
                // The lowest CPU read of the mask and the CPU itself.
                match r.masks[level].as_deref().and_then(|m| m.first_in(&known)) {
                    Some(first) => r.id.min(first as u32),
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
    let groups = Groups::of(raws, online, |i| &keys[i][..=level]);
    let Some((i, j)) = groups.first_mismatch(raws, level) else {
        return Ok(());
    };
    let name = ["package", "die", "cluster", "core"][level];
    let on_mask = |i: usize| raws[i].masks[level].as_deref().map(|m| m.and(online));
    let list = |i: usize| on_mask(i).map_or_else(|| "none".to_string(), |m| m.to_list_string());
    // Both CPUs' files: the damage may be in either.
    let file = |i: usize| format!("{CPU_DIR}/cpu{}/topology/{}", raws[i].id, MASK_FILES[level]);
    Err((
        raws[i].id,
        format!(
            "the {name} sibling masks of CPU {} ({}, {}) and CPU {} ({}, {}) \
             overlap but differ: the kernel writes every such mask from one relation, \
             so the dump is damaged",
            raws[i].id,
            list(i),
            file(i),
            raws[j].id,
            list(j),
            file(j),
        ),
    ))
}

/// The online CPUs of one level grouped by a key. Built by sorting the
/// CPUs by key, not by hashing keys into lists of members, so that a level
/// of 16384 CPUs costs one sort and three tables.
struct Groups {
    /// The index in `raws` of each online CPU read, by CPU number;
    /// [`Groups::NONE`] for the others.
    index: Vec<u32>,
    /// The group of each CPU read, by index in `raws` ([`Groups::NONE`]
    /// for the offline ones).
    group: Vec<u32>,
    sizes: Vec<usize>,
}

impl Groups {
    const NONE: u32 = u32::MAX;

    /// The online CPUs of `raws` (sorted by CPU number) grouped by `key`
    /// of their index: equal keys, one group.
    fn of<K: Ord>(raws: &[RawCpu], online: &CpuMask, key: impl Fn(usize) -> K) -> Groups {
        let mut order: Vec<usize> = (0..raws.len())
            .filter(|&i| online.contains(raws[i].id as usize))
            .collect();
        order.sort_by_key(|&i| key(i));
        let cpus = raws.last().map_or(0, |r| r.id as usize + 1);
        let mut groups = Groups {
            index: vec![Groups::NONE; cpus],
            group: vec![Groups::NONE; raws.len()],
            sizes: Vec::new(),
        };
        for (n, &i) in order.iter().enumerate() {
            if n == 0 || key(order[n - 1]) != key(i) {
                groups.sizes.push(0);
            }
            let g = groups.sizes.len() - 1;
            groups.sizes[g] += 1;
            groups.group[i] = g as u32;
            groups.index[raws[i].id as usize] = i as u32;
        }
        groups
    }

    /// The index in `raws` of `cpu`, if it is an online CPU read.
    fn index_of(&self, cpu: usize) -> Option<usize> {
        match self.index.get(cpu) {
            Some(&i) if i != Groups::NONE => Some(i as usize),
            _ => None,
        }
    }

    /// The first online CPU, in CPU order, whose `level` mask on the online
    /// CPUs is not exactly its group, with the CPU that shows it: the first
    /// one the mask names in another group, else the first of its group
    /// the mask leaves out (indices in `raws`). A mask shared (`Rc`) by a
    /// group's CPUs is checked once for the group: 16384 CPUs' package
    /// masks are otherwise 10^8 bit visits. The last mask seen per group
    /// settles the common case (one mask per group); a group whose CPUs
    /// name several masks (in any order) remembers each one checked.
    fn first_mismatch(&self, raws: &[RawCpu], level: usize) -> Option<(usize, usize)> {
        let mut last: Vec<*const CompactMask> = vec![std::ptr::null(); self.sizes.len()];
        let mut checked: std::collections::HashSet<(usize, *const CompactMask)> =
            std::collections::HashSet::new();
        for (i, r) in raws.iter().enumerate() {
            let g = self.group[i];
            let Some(mask) = r.masks[level].as_ref().filter(|_| g != Groups::NONE) else {
                continue;
            };
            let g = g as usize;
            let p = Rc::as_ptr(mask);
            let prev = std::mem::replace(&mut last[g], p);
            if prev == p {
                continue;
            }
            if !prev.is_null() {
                checked.insert((g, prev));
                if !checked.insert((g, p)) {
                    continue;
                }
            }
            let mut inside = 0;
            for j in mask.iter().filter_map(|c| self.index_of(c)) {
                if self.group[j] as usize != g {
                    return Some((i, j));
                }
                inside += 1;
            }
            if inside != self.sizes[g] {
                let left_out = (0..raws.len())
                    .find(|&j| self.group[j] as usize == g && !mask.contains(raws[j].id as usize));
                // Fewer of the group inside than it holds: one is left out.
                return Some((i, left_out.unwrap_or(i)));
            }
        }
        None
    }
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
    // Each (mask, enclosing mask) pair shared (`Rc`) by CPUs is checked
    // once: a core's threads share both masks, a group's CPUs its mask and
    // their package's.
    let mut nested: std::collections::HashSet<(*const CompactMask, *const CompactMask)> =
        std::collections::HashSet::new();
    let mut nests = |inner: &Rc<CompactMask>, outer: &Rc<CompactMask>| {
        let pair = (Rc::as_ptr(inner), Rc::as_ptr(outer));
        Rc::ptr_eq(inner, outer)
            || nested.contains(&pair)
            || (inner.is_subset_within(&**outer, online) && nested.insert(pair))
    };
    // A die level whose every die is its package carries nothing either:
    // x86 kernels since 5.3 write die_cpus equal to package_cpus on
    // single-die parts, and hwloc merges such a level into the packages.
    // Equal is nested both ways, so the die-in-package half is the nesting
    // test below, already answered.
    if level == DIE {
        let same_as_package =
            raws.iter()
                .filter(|r| online.contains(r.id as usize))
                .all(|r| match (&r.masks[DIE], &r.masks[PACKAGE]) {
                    (Some(d), Some(p)) => nests(d, p) && nests(p, d),
                    _ => false,
                });
        if same_as_package {
            return false;
        }
    }
    raws.iter()
        .filter(|r| online.contains(r.id as usize))
        .all(|r| {
            let Some(mid) = &r.masks[level] else {
                return true;
            };
            let inner_ok = r.masks[CORE].as_ref().is_none_or(|c| nests(c, mid));
            inner_ok && r.masks[PACKAGE].as_ref().is_none_or(|p| nests(mid, p))
        })
}
