#!/usr/bin/env bash
# Makes the pictures the README shows (docs/*.svg). Each `pic FILE ARGS...` line
# runs `manycore ARGS... FILE`; cli/tests/pictures.rs reads these lines, runs
# them again and fails when a committed picture is not what the code draws now,
# so run this script after changing a picture and commit the result.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p manycore
M=target/release/manycore
pic() { local out=$1; shift; "$M" "$@" "$out" > /dev/null; echo "wrote $out"; }

pic docs/topo-x86-2s-32ht.svg topo --machine x86-2s-32ht --format svg --output
pic docs/topo-arm64-d06.svg topo --machine arm64-d06 --format svg --output
pic docs/topo-x86-uv-4096.svg topo --machine x86-uv-4096 --format svg --output
pic docs/domains-power10-shared.svg domains --machine power10-shared-768 --kernel 6.8 --lpar shared --cpu 0 --svg
pic docs/domains-power10-dedicated.svg domains --machine power10-shared-768 --kernel 6.8 --lpar dedicated --cpu 0 --svg
pic docs/boot-x86-2n-128-seed003.svg boot --machine x86-2n-128 --linux pre-6.5 --calibrate lpj=2600000 --compare serial parallel --quiet --svg
