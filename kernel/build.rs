//! Points the linker at the kernel's linker script by absolute path, so the build
//! works whatever directory cargo is started from.
fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    println!("cargo:rustc-link-arg-bins=-Wl,-T,{dir}/linker.ld");
    println!("cargo:rerun-if-changed=linker.ld");
}
