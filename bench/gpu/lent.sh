#!/usr/bin/env bash
# bench/gpu/lent.sh: one call of a lent GPU machine (bench/gpu/pack.sh's binaries, carried as
# one archive), its steps chosen by STEPS, each under a time limit, logs packed into one file.
# The lent machine returns at most 8 files a call, so every log goes into $OUT/logs.tgz, and
# the summary (each step's exit code and seconds, the tests' summary lines and the tables) is
# printed last, where the call's reply shows it.
# Here, before the call: bash bench/gpu/pack.sh --mpi --blas && bash bench/gpu/lent.sh --pack
#   (writes .devpack/dev.tgz from .dev; name .devpack in .git/info/exclude and carry it)
# There: STEPS="tests cli memcheck spmm spgemm" bash bench/gpu/lent.sh
# Steps (in this order, those named in STEPS):
#   tests     test_gpu_host and test_gpu, every test (the nompi build)
#   cli       test_cli_gpu with the MPI build of bin/dsmm (its multi-rank cases run when the
#             carried Open MPI starts), else the nompi build
#   memcheck  compute-sanitizer memcheck on the tests named by SAN_TESTS (dsmm's kernels alone)
#   racecheck compute-sanitizer racecheck likewise
#   spmm      bench_gpu --spmm-only, the SpMM kernels with the default loads in flight (0: by
#             k, dsmmi_gpu_spmm_unroll), 4 and 1 everywhere, then the default again (the spread
#             between equal runs)
#   spgemm    bench_gpu --spgemm-only (--reps 5, R-MAT scale 18 too)
#   resident  bench/gpu/resident.sh on 1 and 4 ranks (host merge against --gpu-resident)
set -uo pipefail
cd "$(dirname "$0")/../.."
if [ "${1:-}" = --pack ]; then
  mkdir -p .devpack
  # (without the OpenBLAS that sourcing env.sh here unpacks: 35 MB; env.sh unpacks it there)
  tar -C . --exclude=.dev/lib/libopenblas.so.0 -czf .devpack/dev.tgz .dev/b .dev/bm .dev/lib \
    .dev/data .dev/env.sh .dev/ompi
  du -sh .devpack/dev.tgz
  exit 0
fi
OUT=${OUT:-/tmp/lent-out}
LOG=/tmp/lent-logs
mkdir -p "$OUT" "$LOG"
STEPS=${STEPS:-tests cli memcheck spmm spgemm}
SAN_TESTS=${SAN_TESTS:-test_resident_merge test_resident_stages test_resident_spmm test_spmm_unroll}
t_start=$SECONDS
[ -d .dev/b ] || tar -xzf .devpack/dev.tgz || { echo "lent.sh: no .dev and no .devpack/dev.tgz"; exit 1; }
# shellcheck disable=SC1091
. .dev/env.sh
export PATH=$PATH:/usr/local/cuda/bin
summary=$LOG/summary.txt
: >"$summary"
pack() { tar -C "$LOG" -czf "$OUT/logs.tgz" . 2>/dev/null; }
step() { # NAME SECONDS CMD...: CMD under a time limit, its output in $LOG/NAME.log
  local name=$1 secs=$2 t0=$SECONDS rc
  shift 2
  echo "== $name (limit $secs s)"
  timeout -k 5 "$secs" "$@" >"$LOG/$name.log" 2>&1
  rc=$?
  echo "== $name: exit $rc in $((SECONDS - t0)) s" | tee -a "$summary"
  tail -3 "$LOG/$name.log"
  pack
  return 0
}
has() { case " $STEPS " in *" $1 "*) return 0 ;; esac; return 1; }
{
  nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.max.sm,clocks.mem,power.limit --format=csv
  nvcc --version 2>/dev/null | tail -1
  echo "cpus $(nproc)"
  mpirun --version 2>&1 | head -1
} >"$LOG/device.txt" 2>&1
cat "$LOG/device.txt"
files=()
for f in "$DSMM_DATA"/matrices/*.mtx* "$DSMM_DATA"/graphs/*.mtx*; do [ -e "$f" ] && files+=("$f"); done

if has tests; then
  step test_gpu_host 60 .dev/b/tests/gpu/test_gpu_host
  step test_gpu "${TESTS_SECS:-200}" .dev/b/tests/gpu/test_gpu
  grep -E "^(ok|FAIL|fail|skip)|passed" "$LOG/test_gpu_host.log" "$LOG/test_gpu.log" >>"$summary"
fi
if has cli; then
  dsmm=.dev/bm/bin/dsmm
  "$dsmm" --version >/dev/null 2>&1 || dsmm=.dev/b/bin/dsmm
  step test_cli_gpu "${CLI_SECS:-240}" bash tests/cli/test_cli_gpu.sh "$dsmm" tests/data
  grep -E "^(FAIL|not ok|bad)|multi-rank|skipped|passed" "$LOG/test_cli_gpu.log" | head -20 >>"$summary"
fi
for tool in memcheck racecheck; do
  has $tool || continue
  # shellcheck disable=SC2086
  DSMM_TEST_NO_CUSPARSE=1 step "$tool" "${SAN_SECS:-200}" compute-sanitizer --tool "$tool" --print-limit 200 \
    --error-exitcode 9 .dev/b/tests/gpu/test_gpu $SAN_TESTS
  grep -E "SUMMARY|passed" "$LOG/$tool.log" >>"$summary"
  grep -oE "(Error|Warning): .*|in [A-Za-z_][A-Za-z0-9_:<>, ]*\(" "$LOG/$tool.log" |
    sed -E 's/0x[0-9a-f]+/X/g' | sort | uniq -c | sort -rn | head -8 >>"$summary"
done
if has spmm; then
  for u in 0 4 1 0; do
    step "spmm-unroll$u-$SECONDS" "${SPMM_SECS:-90}" .dev/b/bench/bench_gpu --spmm-only --reps "${REPS:-7}" \
      --spmm-unroll $u "${files[@]}"
    l=$(ls -t "$LOG"/spmm-unroll"$u"-*.log | head -1)
    echo "-- spmm, --spmm-unroll $u (0: by k) ($(basename "$l"))" >>"$summary"
    grep -iE "geomean|copy:" "$l" >>"$summary"
    grep '"bench": "gpu_spmm"' "$l" |
      sed -E 's/.*"k": ([0-9]+).*"dsmm_ms": ([0-9.]+), "cusparse_ms": ([0-9.]+).*/\1 \2 \3/' |
      awk '$2 > 0 && $3 > 0 { n[$1]++; d[$1] += log($2); c[$1] += log($3) }
        END { for (k in n) printf "   k %4s: %2d matrices, geomean dsmm %.4f ms, cusparse %.4f ms, x%.3f\n",
              k, n[k], exp(d[k] / n[k]), exp(c[k] / n[k]), exp((c[k] - d[k]) / n[k]) }' >>"$summary"
  done
fi
if has spgemm; then
  step spgemm "${SPGEMM_SECS:-150}" .dev/b/bench/bench_gpu --spgemm-only --reps 5 --rmat 18 "${files[@]}"
  grep -iE "geomean|peak|fail" "$LOG/spgemm.log" | head -12 >>"$summary"
fi
if has resident; then
  d=$DSMM_DATA
  RANKS=${RANKS:-1 4} step resident "${RESIDENT_SECS:-200}" bash bench/gpu/resident.sh .dev/bm/bin/dsmm \
    "$LOG/resident" "$d/matrices/cage11.mtx.gz" "$d/graphs/ca-condmat-cc1.mtx.gz" \
    "$d/graphs/facebook-combined.mtx.gz" "$d/graphs/email-enron.mtx.gz"
  grep -vE "^ *$" "$LOG/resident.log" >>"$summary"
fi
pack
echo
echo "==== summary ($((SECONDS - t_start)) s in all)"
cat "$summary"
