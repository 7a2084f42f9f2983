//! Strategies for the values of the kernel's report lines, any value each
//! field's type holds: shared by bootproto's round-trip tests and
//! qemu-runner's console-parser fuzz (path-included by both), so the two
//! generate the same lines.
#![allow(dead_code)]

use bootproto::report::{CpuFacts, PercpuLine, SratRange};
use proptest::prelude::*;

pub fn srat() -> impl Strategy<Value = SratRange> {
    (
        any::<u32>(),
        any::<u32>(),
        any::<u64>(),
        any::<u64>(),
        any::<bool>(),
    )
        .prop_map(|(node, pxm, start, end, hotplug)| SratRange {
            node,
            pxm,
            start,
            end,
            hotplug,
        })
}

pub fn percpu() -> impl Strategy<Value = PercpuLine> {
    (
        (any::<u32>(), any::<u32>(), any::<u32>()),
        (any::<u64>(), any::<u64>(), any::<u64>()),
        (
            any::<Option<u32>>(),
            any::<Option<u64>>(),
            any::<Option<u32>>(),
        ),
    )
        .prop_map(
            |((cpu, apic, node), (area, s0, s1), (callin_apic, callin_apic_base, fallback))| {
                PercpuLine {
                    cpu,
                    apic,
                    node,
                    area,
                    stack: (s0, s1),
                    callin_apic,
                    callin_apic_base,
                    fallback,
                }
            },
        )
}

pub fn facts() -> impl Strategy<Value = CpuFacts> {
    (
        (any::<u32>(), any::<u32>(), any::<u32>()),
        (
            any::<Option<u32>>(),
            any::<u32>(),
            any::<Option<u32>>(),
            any::<bool>(),
        ),
    )
        .prop_map(
            |((cpu, apic, package), (die, core, node, online))| CpuFacts {
                cpu,
                apic,
                package,
                die,
                core,
                node,
                online,
            },
        )
}
