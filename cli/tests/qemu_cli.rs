//! `manycore qemu`'s options: values the command cannot use are one error
//! line naming the option, before the kernel is built or QEMU started.
mod common;

use common::assert_refused;

/// A time-out of 0 can never be met, and one near `u64::MAX` seconds made
/// the deadline (start plus time-out) overflow the clock and panic.
#[test]
fn a_timeout_out_of_range_is_refused() {
    for bad in ["0", "86401", "18446744073709551615"] {
        assert_refused(
            &["qemu", "--cpus", "2", "--timeout", bad],
            &["--timeout", bad],
        );
    }
}

/// Guest memory of 0, less than a MiB per node, or too large to round up to
/// whole MiB per node (it overflowed and wrapped to `-m 0M`).
#[test]
fn memory_that_cannot_be_split_is_refused() {
    for (mib, nodes) in [("0", "1"), ("1", "2"), ("4294967295", "2")] {
        assert_refused(
            &["qemu", "--cpus", "2", "--nodes", nodes, "--memory", mib],
            &["--memory", mib],
        );
    }
}

/// An INIT delay the kernel would wait longer than the time-out (once per
/// AP in a serial bring-up, once in all in a parallel one) is refused before
/// QEMU starts, instead of a boot that can only time out.
#[test]
fn an_init_delay_beyond_the_timeout_is_refused() {
    assert_refused(
        &[
            "qemu",
            "--cpus",
            "2",
            "--init-delay-us",
            "18446744073709551615",
        ],
        &["--init-delay-us 18446744073709551615", "--timeout 900"],
    );
    assert_refused(
        &[
            "qemu",
            "--cpus",
            "301",
            "--bringup",
            "parallel,serial",
            "--init-delay-us",
            "4000000",
        ],
        &["--init-delay-us 4000000", "serial", "300 times"],
    );
    // The parallel kick waits it once: 4 s against a 3 s time-out.
    assert_refused(
        &[
            "qemu",
            "--cpus",
            "301",
            "--init-delay-us",
            "4000000",
            "--timeout",
            "3",
        ],
        &["--init-delay-us 4000000", "parallel", "1 times, 4 s"],
    );
}
