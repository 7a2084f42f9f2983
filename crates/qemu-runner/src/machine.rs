//! A QEMU machine: how many CPUs, how they are grouped, how many NUMA nodes,
//! and the `qemu-system-x86_64` arguments that describe it.

use std::fmt;

/// The virtual machine to boot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Machine {
    /// Total vCPUs (`-smp N`).
    pub cpus: u32,
    /// Sockets × cores × threads, if given (their product must equal `cpus`).
    pub shape: Option<(u32, u32, u32)>,
    /// NUMA nodes (1 = no `-numa` options, so no SRAT).
    pub nodes: u32,
    /// Guest RAM in MiB (split evenly across nodes); `None` picks a default.
    pub memory_mib: Option<u32>,
    /// Force x2APIC on the CPU model; `None` enables it when APIC ids need it.
    pub x2apic: Option<bool>,
    /// Possible CPUs (`-smp N,maxcpus=M`): the MADT lists M, the last M - N
    /// disabled (hot-pluggable, not present).
    pub max_cpus: Option<u32>,
}

/// A machine that QEMU cannot be asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MachineError {
    /// Zero CPUs or nodes, more CPUs than q35 allows (4096), possible CPUs
    /// (`max_cpus`) fewer than the started ones or above 4096, or memory
    /// (`memory_mib`) less than a MiB per node or too large to round up to
    /// a multiple of the node count.
    Count(String),
    /// sockets × cores × threads ≠ the possible CPUs (`max_cpus`, else `cpus`):
    /// QEMU lays the shape out over every possible CPU.
    Shape {
        /// The shape given.
        shape: (u32, u32, u32),
        /// The possible CPU count it must multiply to.
        cpus: u32,
    },
    /// More nodes than CPUs (every node gets at least one CPU here).
    Nodes {
        /// Nodes asked for.
        nodes: u32,
        /// CPUs available.
        cpus: u32,
    },
    /// APIC ids above 254 need x2APIC, which was turned off.
    NeedsX2apic(u32),
}

impl fmt::Display for MachineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MachineError::Count(m) => write!(f, "{m}"),
            MachineError::Shape {
                shape: (s, c, t),
                cpus,
            } => write!(
                f,
                "--sockets {s} --cores {c} --threads {t} gives {} CPUs, not the {cpus} possible CPUs (--max-cpus, else --cpus)",
                u64::from(*s) * u64::from(*c) * u64::from(*t)
            ),
            MachineError::Nodes { nodes, cpus } => {
                write!(
                    f,
                    "{nodes} NUMA nodes need at least as many CPUs, got {cpus}"
                )
            }
            MachineError::NeedsX2apic(id) => write!(
                f,
                "the highest APIC id is {id}: more than 254 needs x2APIC, which was turned off"
            ),
        }
    }
}

impl std::error::Error for MachineError {}

fn bits(n: u32) -> u32 {
    if n <= 1 {
        0
    } else {
        32 - (n - 1).leading_zeros()
    }
}

impl Machine {
    /// `cpus` vCPUs, one socket, one node.
    pub fn new(cpus: u32) -> Self {
        Self {
            cpus,
            shape: None,
            nodes: 1,
            memory_mib: None,
            x2apic: None,
            max_cpus: None,
        }
    }

    /// Sockets × cores × threads as QEMU will lay them out.
    pub fn effective_shape(&self) -> (u32, u32, u32) {
        self.shape.unwrap_or((1, self.possible(), 1))
    }

    /// CPUs the firmware lists: `max_cpus`, else `cpus`.
    pub fn possible(&self) -> u32 {
        self.max_cpus.unwrap_or(self.cpus)
    }

    /// Checks the counts against each other and QEMU's limits.
    pub fn validate(&self) -> Result<(), MachineError> {
        if self.cpus == 0 || self.cpus > 4096 {
            return Err(MachineError::Count(format!(
                "--cpus must be 1..=4096 (q35's limit), got {}",
                self.cpus
            )));
        }
        if let Some(max) = self.max_cpus {
            // Checked before anything divides by the shape or subtracts one
            // from the possible count (apic_id, max_apic_id).
            if max < self.cpus || max > 4096 {
                return Err(MachineError::Count(format!(
                    "--max-cpus must be between --cpus ({}) and 4096 (q35's limit), got {max}",
                    self.cpus
                )));
            }
        }
        if self.nodes == 0 {
            return Err(MachineError::Count("--nodes must be at least 1".into()));
        }
        if let Some((s, c, t)) = self.shape {
            if s.checked_mul(c).and_then(|x| x.checked_mul(t)) != Some(self.possible()) {
                return Err(MachineError::Shape {
                    shape: (s, c, t),
                    cpus: self.possible(),
                });
            }
        }
        if self.nodes > self.cpus {
            return Err(MachineError::Nodes {
                nodes: self.nodes,
                cpus: self.cpus,
            });
        }
        if let Some(mib) = self.memory_mib {
            // `memory` rounds the size up to whole MiB per node.
            if mib < self.nodes || mib.checked_next_multiple_of(self.nodes).is_none() {
                return Err(MachineError::Count(format!(
                    "--memory must be from --nodes ({}) to {} MiB, got {mib}",
                    self.nodes,
                    u32::MAX / self.nodes * self.nodes
                )));
            }
        }
        if self.x2apic == Some(false) && self.max_apic_id() > 254 {
            return Err(MachineError::NeedsX2apic(self.max_apic_id()));
        }
        Ok(())
    }

    /// APIC id QEMU gives logical CPU `index` (its x86 topology: thread bits,
    /// then core bits, then the socket, each field rounded up to a power of two).
    pub fn apic_id(&self, index: u32) -> u32 {
        let (_, cores, threads) = self.effective_shape();
        let thread = index % threads;
        let core = (index / threads) % cores;
        let socket = index / (threads * cores);
        (socket << (bits(cores) + bits(threads))) | (core << bits(threads)) | thread
    }

    /// The largest APIC id of the machine.
    pub fn max_apic_id(&self) -> u32 {
        self.apic_id(self.possible() - 1)
    }

    /// Whether the CPU model gets `+x2apic`.
    pub fn uses_x2apic(&self) -> bool {
        self.x2apic.unwrap_or(self.max_apic_id() > 254)
    }

    /// Whether some APIC id does not fit xAPIC's 8-bit destinations (above
    /// 254; 255 is broadcast). Such a machine gets an `intel-iommu` with
    /// interrupt remapping in x2APIC mode (`intremap=on,eim=on`) and SeaBIOS,
    /// which hands over with x2APIC enabled, because Linux 6.12 needs both:
    /// it registers MADT x2APIC entries only when the firmware left x2APIC on
    /// (otherwise it boots 255 CPUs in xAPIC mode, where QEMU also delivers
    /// an INIT/SIPI for APIC id n to id n + 256, and two CPUs enter the same
    /// trampoline: the reset seen at 1024 vCPUs), and it keeps x2APIC only if
    /// interrupt remapping can address every id ("x2apic: IRQ remapping
    /// doesn't support X2APIC mode" turns it back off otherwise). The
    /// manycore kernel needs neither and ignores both.
    ///
    /// Such a machine also runs without SMM (`-machine q35,smm=off`), which
    /// neither kernel uses: under TCG each vCPU with SMM gets an address
    /// space of its own (system memory with SMRAM over it) that QEMU cannot
    /// share between vCPUs, so every change to the memory map while the
    /// machine starts is rendered once per vCPU: with a thousand vCPUs that
    /// alone outgrows the host's memory before the guest runs (BENCHMARKS.md
    /// has the measurement).
    pub fn beyond_xapic(&self) -> bool {
        self.max_apic_id() > 254
    }

    /// The node of logical CPU `index`: CPUs split into `nodes` contiguous runs.
    pub fn node_of(&self, index: u32) -> u32 {
        (index as u64 * self.nodes as u64 / self.cpus as u64) as u32
    }

    /// First and last CPU of `node`.
    pub fn node_cpus(&self, node: u32) -> (u32, u32) {
        let first = (0..self.cpus)
            .find(|&c| self.node_of(c) == node)
            .unwrap_or(0);
        let last = (0..self.cpus)
            .rev()
            .find(|&c| self.node_of(c) == node)
            .unwrap_or(0);
        (first, last)
    }

    /// SLIT distance between two nodes: 10 local, 15 to the other node of its
    /// pair (0-1, 2-3, ...), 25 beyond — two remote levels, so the NUMA
    /// scheduler domains have something to show.
    pub fn distance(&self, a: u32, b: u32) -> u32 {
        if a == b {
            10
        } else if a / 2 == b / 2 {
            15
        } else {
            25
        }
    }

    /// Guest RAM in MiB: the given value or 256 MiB per node, at least 512 MiB,
    /// plus 1 MiB per 4 vCPUs.
    pub fn memory(&self) -> u32 {
        self.memory_mib
            .unwrap_or_else(|| (256 * self.nodes).max(512) + self.cpus / 4)
            .div_ceil(self.nodes)
            * self.nodes
    }

    /// QEMU arguments for the machine (without `-kernel`/`-append`).
    pub fn qemu_args(&self) -> Vec<String> {
        let mut a: Vec<String> = Vec::new();
        let mut push = |s: &str| a.push(s.to_string());
        push("-machine");
        push(if self.beyond_xapic() {
            "q35,smm=off"
        } else {
            "q35"
        });
        push("-cpu");
        push(if self.uses_x2apic() {
            "qemu64,+x2apic"
        } else {
            "qemu64"
        });
        let (s, c, t) = self.effective_shape();
        push("-smp");
        let max = self
            .max_cpus
            .map(|m| format!(",maxcpus={m}"))
            .unwrap_or_default();
        a.push(format!(
            "{}{max},sockets={s},cores={c},threads={t}",
            self.cpus
        ));
        a.push("-m".into());
        a.push(format!("{}M", self.memory()));
        if self.beyond_xapic() {
            a.push("-device".into());
            a.push("intel-iommu,intremap=on,eim=on".into());
        }
        if self.nodes > 1 {
            let per = self.memory() / self.nodes;
            for n in 0..self.nodes {
                let (first, last) = self.node_cpus(n);
                a.push("-object".into());
                a.push(format!("memory-backend-ram,id=m{n},size={per}M"));
                a.push("-numa".into());
                a.push(format!("node,nodeid={n},cpus={first}-{last},memdev=m{n}"));
            }
            for x in 0..self.nodes {
                for y in x + 1..self.nodes {
                    a.push("-numa".into());
                    a.push(format!("dist,src={x},dst={y},val={}", self.distance(x, y)));
                }
            }
        }
        a
    }
}

impl Machine {
    /// The topology QEMU presents for this machine, in the shared model: what
    /// the kernel should discover from MADT, SRAT, SLIT and CPUID (all CPUs
    /// online), caches included as a Linux 6.12 guest reads them.
    ///
    /// The caches are QEMU's legacy AMD model, which `-cpu qemu64` (vendor
    /// AuthenticAMD, no TOPOEXT) reports in CPUID 0x8000_0005/6 (target/i386/cpu.c:
    /// `legacy_l1d_cache_amd`, `legacy_l1i_cache_amd` 64 KiB 2-way,
    /// `legacy_l2_cache_amd` 512 KiB 16-way, `legacy_l3_cache` 16 MiB 16-way
    /// shared per die; 64-byte lines). Those leaves carry no sharing, so Linux
    /// keeps L1 and L2 private to each CPU, and shares the L3 among the CPUs
    /// whose APIC ids agree above the package bits (its LLC id) and that sit
    /// on the same node (`topology_sane()`).
    pub fn expected_topology(&self) -> Result<topology::Topology, topology::BuildError> {
        use topology::{Arch, Cache, CacheKind, CpuSpec, HwIdKind, TopologyBuilder};
        let (_, cores, threads) = self.effective_shape();
        let mut b = TopologyBuilder::new(Arch::X86_64);
        b.source("qemu").hw_id_kind(HwIdKind::ApicId);
        for i in 0..self.cpus {
            b.add_cpu(CpuSpec {
                id: i,
                hw_id: Some(self.apic_id(i) as u64),
                online: true,
                package: i / (cores * threads),
                core: (i / threads) % cores,
                node: Some(self.node_of(i)),
                ..CpuSpec::default()
            });
        }
        for n in 0..self.nodes {
            let mask = (0..self.cpus)
                .filter(|&c| self.node_of(c) == n)
                .map(|c| c as usize)
                .collect::<cpumask::CompactMask>();
            b.add_node(n, mask, None);
        }
        if self.nodes > 1 {
            let d = (0..self.nodes)
                .flat_map(|a| (0..self.nodes).map(move |b| (a, b)))
                .map(|(a, b)| self.distance(a, b))
                .collect();
            b.distances(d);
        }
        let cache = |level, kind, kib: u64, ways, cpus: cpumask::CpuMask| Cache {
            level,
            kind,
            size_bytes: Some(kib * 1024),
            line_bytes: Some(64),
            ways: Some(ways),
            cpus: cpus.into(),
        };
        let mut l3: std::collections::BTreeMap<(u32, u32), cpumask::CpuMask> =
            std::collections::BTreeMap::new();
        let package_bits = bits(cores) + bits(threads);
        for i in 0..self.cpus {
            let me = cpumask::CpuMask::single(i as usize);
            b.add_cache(cache(1, CacheKind::Data, 64, 2, me));
            b.add_cache(cache(1, CacheKind::Instruction, 64, 2, me));
            b.add_cache(cache(2, CacheKind::Unified, 512, 16, me));
            l3.entry((self.apic_id(i) >> package_bits, self.node_of(i)))
                .or_default()
                .set(i as usize);
        }
        for cpus in l3.into_values() {
            b.add_cache(cache(3, CacheKind::Unified, 16 * 1024, 16, cpus));
        }
        b.build()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apic_ids_follow_qemu_topology_bits() {
        let m = Machine {
            shape: Some((2, 3, 2)),
            ..Machine::new(12)
        };
        // threads: 1 bit, cores: 2 bits -> socket at bit 3.
        assert_eq!(m.apic_id(0), 0);
        assert_eq!(m.apic_id(1), 1);
        assert_eq!(m.apic_id(2), 2);
        assert_eq!(m.apic_id(5), 5);
        assert_eq!(m.apic_id(6), 8);
        assert_eq!(m.max_apic_id(), 13);
    }

    #[test]
    fn x2apic_when_ids_exceed_254() {
        assert!(!Machine::new(255).uses_x2apic());
        assert!(Machine::new(256).uses_x2apic());
        // 100 cores take 7 bits: socket 1 starts at 128, ends at 227.
        let m = Machine {
            shape: Some((2, 100, 1)),
            ..Machine::new(200)
        };
        assert_eq!(m.max_apic_id(), 227);
        assert!(!m.uses_x2apic());
        // 195 CPUs, but socket 2 starts at APIC id 256.
        let m = Machine {
            shape: Some((3, 65, 1)),
            ..Machine::new(195)
        };
        assert_eq!(m.max_apic_id(), 320);
        assert!(m.uses_x2apic());
        let off = Machine {
            x2apic: Some(false),
            ..Machine::new(300)
        };
        assert_eq!(off.validate(), Err(MachineError::NeedsX2apic(299)));
    }

    #[test]
    fn interrupt_remapping_only_beyond_apic_id_254() {
        let iommu = |m: &Machine| {
            m.qemu_args()
                .windows(2)
                .any(|w| w[0] == "-device" && w[1] == "intel-iommu,intremap=on,eim=on")
        };
        // 255 CPUs end at APIC id 254: xAPIC can address them all.
        assert!(!Machine::new(255).beyond_xapic());
        assert!(!iommu(&Machine::new(255)));
        assert!(Machine::new(256).beyond_xapic());
        assert!(iommu(&Machine::new(1024)));
        // Without SMM exactly then: the small machines keep the command line
        // their Linux captures were taken on.
        assert_eq!(Machine::new(1024).qemu_args()[1], "q35,smm=off");
        assert_eq!(Machine::new(255).qemu_args()[1], "q35");
        // x2APIC forced on below 255 ids does not need remapping.
        let forced = Machine {
            x2apic: Some(true),
            ..Machine::new(8)
        };
        assert!(forced.uses_x2apic() && !iommu(&forced));
        // 195 CPUs whose third socket starts at APIC id 256.
        let sparse = Machine {
            shape: Some((3, 65, 1)),
            ..Machine::new(195)
        };
        assert!(iommu(&sparse));
    }

    #[test]
    fn nodes_split_cpus_contiguously() {
        let m = Machine {
            nodes: 4,
            ..Machine::new(64)
        };
        assert_eq!(m.node_cpus(0), (0, 15));
        assert_eq!(m.node_cpus(3), (48, 63));
        let args = m.qemu_args().join(" ");
        assert!(
            args.contains("-numa node,nodeid=2,cpus=32-47,memdev=m2"),
            "{args}"
        );
        assert!(args.contains("-numa dist,src=0,dst=1,val=15"), "{args}");
        assert!(args.contains("-numa dist,src=1,dst=2,val=25"), "{args}");
    }

    #[test]
    fn bad_counts_are_errors() {
        assert!(Machine::new(0).validate().is_err());
        assert!(Machine::new(5000).validate().is_err());
        let m = Machine {
            shape: Some((2, 2, 2)),
            ..Machine::new(9)
        };
        assert!(matches!(m.validate(), Err(MachineError::Shape { .. })));
        let m = Machine {
            nodes: 3,
            ..Machine::new(2)
        };
        assert!(matches!(m.validate(), Err(MachineError::Nodes { .. })));
    }

    /// `m` is refused as a count error naming `option` and its `value`.
    fn assert_refused(m: &Machine, option: &str, value: u32, context: &str) {
        match m.validate() {
            Err(MachineError::Count(msg)) => assert!(
                msg.contains(option) && msg.contains(&value.to_string()),
                "{msg}"
            ),
            other => panic!("{option} {value} {context}: {other:?}"),
        }
    }

    /// `--memory` 0 would give QEMU `-m 0M`, and a size near `u32::MAX` on
    /// several nodes overflowed when `memory` rounded it up to whole MiB per
    /// node: both are refused naming the option; the largest size that rounds
    /// is accepted.
    #[test]
    fn memory_must_give_each_node_a_mib_and_round_up() {
        for (mib, nodes) in [(0, 1), (1, 2), (u32::MAX, 2), (u32::MAX - 1, 4)] {
            let m = Machine {
                memory_mib: Some(mib),
                nodes,
                ..Machine::new(4)
            };
            assert_refused(&m, "--memory", mib, &format!("on {nodes} nodes"));
        }
        for (mib, nodes) in [(1, 1), (2, 2), (u32::MAX, 1), (u32::MAX - 1, 2)] {
            let m = Machine {
                memory_mib: Some(mib),
                nodes,
                ..Machine::new(4)
            };
            assert_eq!(m.validate(), Ok(()), "--memory {mib} on {nodes} nodes");
            assert!(m.memory() >= mib && m.memory().is_multiple_of(nodes));
        }
    }

    /// `--max-cpus` below `--cpus` (0 included) would divide by zero in
    /// `apic_id` and underflow in `max_apic_id`: `validate` refuses it before
    /// either runs, and the shape must cover every possible CPU.
    #[test]
    fn max_cpus_must_lie_between_cpus_and_4096() {
        for bad in [0, 3, 4097] {
            let m = Machine {
                max_cpus: Some(bad),
                ..Machine::new(4)
            };
            assert_refused(&m, "--max-cpus", bad, "");
        }
        for good in [4, 8, 4096] {
            let m = Machine {
                max_cpus: Some(good),
                ..Machine::new(4)
            };
            assert_eq!(m.validate(), Ok(()), "--max-cpus {good}");
        }
        // The shape multiplies to the possible CPUs, not the started ones.
        let shaped = |cpus, max| Machine {
            shape: Some((2, 2, 2)),
            max_cpus: max,
            ..Machine::new(cpus)
        };
        assert_eq!(shaped(4, Some(8)).validate(), Ok(()));
        let err = shaped(8, Some(16)).validate().unwrap_err();
        assert_eq!(
            err,
            MachineError::Shape {
                shape: (2, 2, 2),
                cpus: 16
            }
        );
        assert!(
            err.to_string().contains("not the 16 possible CPUs"),
            "{err}"
        );
        // A shape whose product overflows u32 is an error, not a panic.
        let huge = Machine {
            shape: Some((65536, 65536, 2)),
            ..Machine::new(4)
        };
        assert!(huge
            .validate()
            .unwrap_err()
            .to_string()
            .contains("8589934592"));
    }
}
