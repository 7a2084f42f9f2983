//! What the QEMU boot tests share.

use std::path::PathBuf;
use std::sync::OnceLock;

/// The manycore kernel, built once per test binary; without QEMU every test
/// fails with the install hint instead of passing silently.
pub fn kernel() -> PathBuf {
    static KERNEL: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    KERNEL
        .get_or_init(|| {
            qemu_runner::qemu_version().map_err(|e| e.to_string())?;
            qemu_runner::build_kernel().map_err(|e| e.to_string())
        })
        .clone()
        .unwrap_or_else(|e| panic!("{e}"))
}
