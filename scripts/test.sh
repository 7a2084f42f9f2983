#!/usr/bin/env bash
# The whole test suite: formatting, lints, and every crate's tests (including the
# corpus tests, which read ../shared/corpus, and the QEMU boot tests).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cargo fmt --all --check
cargo clippy --workspace --all-targets -- -D warnings
# The bare-metal kernel is its own workspace (freestanding link flags).
(cd kernel && cargo fmt --check && cargo clippy --release -- -D warnings)
cargo test --workspace --release
