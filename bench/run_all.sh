#!/usr/bin/env bash
# bench/run_all.sh BUILD: every benchmark, each printing JSON lines (make bench).
set -euo pipefail
build=${1:-build/release}
here=$(cd "$(dirname "$0")" && pwd)
cmake --build "$build" -j "$(nproc)" --target bench_read >/dev/null
bash "$here/read_vs_scipy.sh" "$build" 2
