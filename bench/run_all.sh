#!/usr/bin/env bash
# bench/run_all.sh BUILD: every benchmark, each printing JSON lines (make bench).
# DSMM_BENCH_SPGEMM_ARGS / DSMM_BENCH_SPMM_ARGS / DSMM_BENCH_DIST_ARGS / DSMM_BENCH_COLA_ARGS
# pass options to bench/spgemm.sh, bench/spmm.sh, bench/dist.sh and bench/cola.sh (e.g.
# "--quick").
set -euo pipefail
build=${1:-build/release}
here=$(cd "$(dirname "$0")" && pwd)
cmake --build "$build" -j "$(nproc)" --target bench_read bench_spgemm bench_spmm stream dsmm_cli >/dev/null
# The GraphBLAS and PETSc drivers exist only when configure found those libraries.
targets=$(cmake --build "$build" --target help 2>/dev/null || true)
for t in spgemm_graphblas spgemm_petsc spmm_graphblas dist_petsc; do
  if grep -qw "$t" <<<"$targets"; then
    cmake --build "$build" -j "$(nproc)" --target "$t" >/dev/null
  fi
done
bash "$here/read_vs_scipy.sh" "$build" 2
# shellcheck disable=SC2086 # word splitting of the options is wanted
bash "$here/spgemm.sh" "$build" ${DSMM_BENCH_SPGEMM_ARGS:-}
# shellcheck disable=SC2086
bash "$here/spmm.sh" "$build" ${DSMM_BENCH_SPMM_ARGS:-}
# shellcheck disable=SC2086
bash "$here/dist.sh" "$build" ${DSMM_BENCH_DIST_ARGS:-}
# shellcheck disable=SC2086
bash "$here/cola.sh" "$build" ${DSMM_BENCH_COLA_ARGS:-}
