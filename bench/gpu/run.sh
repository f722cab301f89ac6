#!/usr/bin/env bash
# bench/gpu/run.sh: the GPU checks and timings in one go, on a machine with an NVIDIA GPU:
# configure and build with CUDA (sm_80 and sm_90), run the tests labelled gpu (plus the host-side
# GPU unit test), run test_gpu under compute-sanitizer (memcheck, racecheck) when it is there,
# then time dsmm's SpGEMM and SpMM against cuSPARSE (bench_gpu: device events after a warm-up,
# median of 5) on the matrices of ../shared/data and R-MAT scales 18-20; then the out-of-core
# and hybrid products against the CPU in core (bench/ooc.sh --gpu).
# Usage: bash bench/gpu/run.sh [BUILD_DIR] [OUT_DIR]   (logs go to OUT_DIR, default $OUT or .)
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build/gpu}
OUT=${2:-${OUT:-.}}
mkdir -p "$OUT"
export PATH=$PATH:/usr/local/cuda/bin
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "bench/gpu/run.sh: no NVIDIA GPU visible; nothing to run"; exit 77
fi
nvidia-smi -L | tee "$OUT/device.txt"
JOBS=$(nproc 2>/dev/null || echo 4)
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DDSMM_USE_CUDA=ON \
  "-DCMAKE_CUDA_ARCHITECTURES=80;90" >"$OUT/configure.log" 2>&1 || { tail -30 "$OUT/configure.log"; exit 1; }
cmake --build "$BUILD" -j "$JOBS" >"$OUT/build.log" 2>&1 || { grep -E "error" "$OUT/build.log" | head -40; exit 1; }
echo "== gpu tests"
(cd "$BUILD" && ctest -L gpu --output-on-failure; ctest -R test_gpu_host --output-on-failure) 2>&1 | tee "$OUT/tests.log"
if command -v compute-sanitizer >/dev/null 2>&1; then
  for tool in memcheck racecheck; do
    echo "== compute-sanitizer --tool $tool"
    compute-sanitizer --tool "$tool" --error-exitcode 9 "$BUILD/tests/gpu/test_gpu" \
      test_spgemm_shapes test_spgemm_bins test_spmm >"$OUT/sanitizer-$tool.log" 2>&1
    echo "exit $? ($OUT/sanitizer-$tool.log)"; tail -3 "$OUT/sanitizer-$tool.log"
  done
fi
echo "== timings (dsmm vs cuSPARSE)"
DATA=${DSMM_DATA:-../shared/data}
[ -d "$DATA" ] || DATA=shared/data
[ -d "$DATA" ] || echo "no ../shared/data: R-MAT only"
files=()
for f in "$DATA"/matrices/*.mtx* "$DATA"/graphs/*.mtx*; do [ -e "$f" ] && files+=("$f"); done
"$BUILD/bench/bench_gpu" --reps 5 --rmat 18 --rmat 19 --rmat 20 "${files[@]}" 2>&1 | tee "$OUT/bench_gpu.log"
echo "== out of core and hybrid (bench/ooc.sh --gpu: CPU in core on all cores, GPU chunks, hybrid)"
bash bench/ooc.sh "$BUILD/bin/dsmm" --gpu --repeat 3 --rmat 18 --rmat 20 --out "$OUT/ooc" 2>&1 | tee "$OUT/ooc.log"
