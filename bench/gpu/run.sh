#!/usr/bin/env bash
# bench/gpu/run.sh: the GPU checks and timings in one go, on a machine with an NVIDIA GPU:
# configure and build with CUDA (sm_80 and sm_90), run the tests labelled gpu (test_gpu, the
# device kernels against the CPU's; test_cli_gpu, the CLI's device paths) and the host-side GPU
# unit test, then time dsmm's SpGEMM and SpMM against cuSPARSE (bench_gpu: device events after a
# warm-up, median of 5) on the matrices of ../shared/data and R-MAT scales 18-20, run test_gpu
# under compute-sanitizer (memcheck, racecheck) when it is there, and last the out-of-core and
# hybrid products against the CPU in core (bench/ooc.sh --gpu).
# Usage: bash bench/gpu/run.sh [BUILD_DIR] [OUT_DIR]   (logs go to OUT_DIR, default $OUT or .)
# Environment:
#   DSMM_PREBUILT=1     BUILD_DIR already holds bin/dsmm, tests/gpu/test_gpu{,_host} and
#                       bench/bench_gpu (built elsewhere with the same CUDA): no configure, no
#                       build, the test binaries run directly instead of through ctest
#   DSMM_DATA=DIR       the data folder (default ../shared/data, then shared/data)
#   DSMM_GPU_STEPS="tests cli bench plan sanitizer ooc resident"   the steps to run, in this
#                       order (plan: bench_gpu's SpGEMM again with the rows binned on the host;
#                       resident: partial products merged on the host against on the device,
#                       SUMMA and rdma-c, spgemm and spmm's C tile, bench/gpu/resident.sh)
#   DSMM_GPU_BENCH_ARGS extra arguments of bench_gpu (default: --reps 5 --rmat 18 --rmat 19 --rmat 20)
#   DSMM_GPU_BENCH_SECS, DSMM_GPU_SANITIZER_SECS, DSMM_GPU_OOC_SECS   the steps' time limits
#                       (420, 480 and 300 s; racecheck needs about 330 s for the SpGEMM tests)
# On a lent machine with a 10-minute limit a call, run the steps over two or three calls;
# docs/bench.md ("Running it on a lent machine") has the recipe used on 2026-11-24.
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build/gpu}
OUT=${2:-${OUT:-.}}
STEPS=${DSMM_GPU_STEPS:-tests cli bench plan sanitizer ooc resident}
mkdir -p "$OUT"
export PATH=$PATH:/usr/local/cuda/bin
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "bench/gpu/run.sh: no NVIDIA GPU visible; nothing to run"; exit 77
fi
{
  nvidia-smi -L
  nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.max.sm,clocks.mem,power.limit --format=csv
  nvcc --version 2>/dev/null | tail -1
  echo "cpus $(nproc)"
} 2>&1 | tee "$OUT/device.txt"
JOBS=$(nproc 2>/dev/null || echo 4)
if [ "${DSMM_PREBUILT:-0}" != 1 ]; then
  cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DDSMM_USE_CUDA=ON \
    "-DCMAKE_CUDA_ARCHITECTURES=80;90" >"$OUT/configure.log" 2>&1 || { tail -30 "$OUT/configure.log"; exit 1; }
  cmake --build "$BUILD" -j "$JOBS" >"$OUT/build.log" 2>&1 || { grep -E "error" "$OUT/build.log" | head -40; exit 1; }
fi
DATA=${DSMM_DATA:-../shared/data}
[ -d "$DATA" ] || DATA=shared/data
[ -d "$DATA" ] || echo "no ../shared/data: R-MAT only"
has() { case " $STEPS " in *" $1 "*) return 0 ;; esac; return 1; }
rc_all=0
step() { # NAME SECONDS LOG CMD...: runs CMD under a time limit, its output to the terminal and
  # appended to LOG; prints its exit code and time
  local name=$1 secs=$2 log=$3 t0=$SECONDS rc
  shift 3
  timeout "$secs" "$@" 2>&1 | tee -a "$log"
  rc=${PIPESTATUS[0]}
  echo "== $name: exit $rc in $((SECONDS - t0)) s"
  [ "$rc" -eq 0 ] || [ "$rc" -eq 77 ] || rc_all=1
  return 0
}

if has tests; then
  echo "== gpu tests"
  if [ "${DSMM_PREBUILT:-0}" = 1 ]; then
    step test_gpu_host 120 "$OUT/tests.log" "$BUILD/tests/gpu/test_gpu_host"
    step test_gpu 300 "$OUT/tests.log" "$BUILD/tests/gpu/test_gpu"
  else
    (cd "$BUILD" && ctest -L gpu --output-on-failure; ctest -R test_gpu_host --output-on-failure) 2>&1 | tee "$OUT/tests.log"
  fi
fi
if has cli && [ "${DSMM_PREBUILT:-0}" = 1 ]; then # ctest -L gpu ran it otherwise
  echo "== test_cli_gpu"
  step test_cli_gpu 300 "$OUT/cli.log" bash tests/cli/test_cli_gpu.sh "$BUILD/bin/dsmm" tests/data
fi
files=()
for f in "$DATA"/matrices/*.mtx* "$DATA"/graphs/*.mtx*; do [ -e "$f" ] && files+=("$f"); done
if has bench; then
  echo "== timings (dsmm vs cuSPARSE)"
  # shellcheck disable=SC2086
  step bench_gpu "${DSMM_GPU_BENCH_SECS:-420}" "$OUT/bench_gpu.log" "$BUILD/bench/bench_gpu" ${DSMM_GPU_BENCH_ARGS:---reps 5 --rmat 18 --rmat 19 --rmat 20} \
    "${files[@]}"
fi
if has plan; then
  echo "== SpGEMM planned on the host (--host-plan), for the call times against the device's planning above"
  # shellcheck disable=SC2086
  step bench_gpu_host_plan "${DSMM_GPU_BENCH_SECS:-420}" "$OUT/bench_gpu_host_plan.log" "$BUILD/bench/bench_gpu" \
    --spgemm-only --host-plan --reps 5 --rmat 18 "${files[@]}"
  grep -h "call less its copies" "$OUT/bench_gpu.log" "$OUT/bench_gpu_host_plan.log"
fi
if has sanitizer && command -v compute-sanitizer >/dev/null 2>&1; then
  # dsmm's kernels alone first (DSMM_TEST_NO_CUSPARSE: no cuSPARSE references), then with them;
  # the hazards and errors counted by kernel, so a report names whose kernel it is
  for tool in memcheck racecheck; do
    for only in 1 0; do
      echo "== compute-sanitizer --tool $tool (cuSPARSE references: $([ $only = 1 ] && echo no || echo yes))"
      export DSMM_TEST_NO_CUSPARSE=$only
      step "sanitizer $tool" "${DSMM_GPU_SANITIZER_SECS:-480}" \
        "$OUT/sanitizer-$tool-$only.log" compute-sanitizer --tool "$tool" --print-limit 1000 \
        --error-exitcode 9 "$BUILD/tests/gpu/test_gpu" test_spgemm_shapes test_spgemm_bins test_spgemm_plan test_spgemm_spread test_spmm \
        test_resident_merge test_resident_stages test_resident_spmm \
        | grep -E "SUMMARY|passed|exit"
      grep -oE "(Error|Warning): .*|in [A-Za-z_][A-Za-z0-9_:<>, ]*\(" "$OUT/sanitizer-$tool-$only.log" \
        | sed -E 's/0x[0-9a-f]+/X/g' | sort | uniq -c | sort -rn | head -12
    done
  done
fi
if has ooc; then
  echo "== out of core and hybrid (bench/ooc.sh --gpu: CPU in core on all cores, GPU chunks, hybrid)"
  step ooc "${DSMM_GPU_OOC_SECS:-300}" "$OUT/ooc.log" bash bench/ooc.sh "$BUILD/bin/dsmm" --gpu --repeat "${DSMM_GPU_OOC_REPEAT:-3}" \
    --out /tmp/dsmm-bench-ooc
fi
if has resident; then
  echo "== partial products (SUMMA, rdma-c; spgemm, spmm): on the host against resident on the device (--gpu-resident)"
  step resident "${DSMM_GPU_RESIDENT_SECS:-300}" "$OUT/resident.log" bash bench/gpu/resident.sh "$BUILD/bin/dsmm" \
    "$OUT/resident" "$DATA/matrices/cage11.mtx.gz" "$DATA/graphs/ca-condmat-cc1.mtx.gz" "$DATA/graphs/facebook-combined.mtx.gz" \
    "$DATA/graphs/email-enron.mtx.gz"
fi
exit $rc_all
