//! The examples the crate documentation shows, run here as tests: rustdoc
//! only compiles them (`no_run`), so that they run in a test binary like
//! every other test, built with the release profile, where a crash names the
//! binary that can be rerun, not in a temporary directory rustdoc deletes.
#[path = "../examples/overview.rs"]
mod overview;

#[test]
fn the_documented_example_holds() {
    overview::main();
}
