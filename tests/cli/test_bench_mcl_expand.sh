#!/bin/bash
# tests/cli/test_bench_mcl_expand.sh: bench/mcl_expand still runs on a checkpoint that `dsmm mcl`
# writes (it broke once, silently, when checkpoints gained the input's fingerprint): collins2007
# after one iteration, every SIMD level, iterates bit for bit the same.
# usage: test_bench_mcl_expand.sh DSMM_BINARY MCL_EXPAND_BINARY DATA_DIR
set -u
dsmm=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
expand=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
data=$(cd "$3" && pwd)
. "$(dirname "$0")/lib.sh"
cd "$tmp" || exit 1

expect_rc 0 "$dsmm" mcl "$data/collins2007.txt.gz" --abc -L 1 --checkpoint ck -o one.out -q
expect_rc 0 "$expand" ck --threads 2 --rounds 1 --levels 0,1,2,3
expect_grep "$tmp/out" '^# ck: 1622 vertices'
expect_grep "$tmp/out" '^simd level 3: median'
expect_grep "$tmp/out" '^iterates identical across levels and rounds: yes$'
# A directory that is not a checkpoint: a message naming it, exit 1.
mkdir -p empty
expect_rc 1 "$expand" empty --rounds 1
expect_grep "$tmp/err" 'mcl_expand: empty:'

echo "test_bench_mcl_expand: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
