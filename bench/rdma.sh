#!/usr/bin/env bash
# bench/rdma.sh: the one-sided ("RDMA") distributed algorithms against Sparse SUMMA on P MPI
# ranks, and against `dsmm model` (docs/bench.md, "One-sided algorithms"). Per input and op
# (SpGEMM C = A*A, SpMM C = A*B with B dense n x k): every --algo (summa with --accumulate
# merge, rdma-c, rdma-a, rdma-b, ws-random-a, ws-local-a, ws-local-c), each its own mpirun
# with --prefetch --repeat R --stats, then `dsmm model` on the same grid; the report compares
# each rank's counted bytes and gets with the model's, exactly.
#
# Usage: bash bench/rdma.sh BUILD_DIR [--ranks 4] [--ops "spgemm spmm"] [--repeat 3] [--k 128]
#             [--algos "summa rdma-c ..."] [--only NAME...] [--rmat-scale 14] [--no-prefetch]
#             [--out DIR] [--results FILE|none] [--list]
# BUILD_DIR holds bin/dsmm (cmake --build BUILD_DIR --target dsmm_cli; Release). Inputs come
# from ../shared/data next to the repository, or $DSMM_SHARED_DATA (missing files are skipped),
# tests/data, and dsmm gen rmat. Each rank runs 1 OpenMP thread. Output: the tables on stdout;
# everything also in DIR/rdma-DATE.log and DIR/rdma-DATE.jsonl (DIR defaults to
# BUILD_DIR/bench-results), and the log with every JSON line in docs/results/rdma-YYYY-MM-DD.txt
# unless --results says otherwise (none: no copy).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
here=$repo/bench

usage() { sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 1 ] || usage
case "$1" in -h|--help) usage ;; esac
build=$1
shift
ranks=4
ops="spgemm spmm"
repeat=3
k=128
algos="summa rdma-c rdma-a rdma-b ws-random-a ws-local-a ws-local-c"
rmat_scale=14
prefetch=1
out=""
results=""
list=0
only=()
while [ $# -gt 0 ]; do
  case "$1" in
    --ranks) ranks=$2; shift 2 ;;
    --ops) ops=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --k) k=$2; shift 2 ;;
    --algos) algos=$2; shift 2 ;;
    --rmat-scale) rmat_scale=$2; shift 2 ;;
    --no-prefetch) prefetch=0; shift ;;
    --out) out=$2; shift 2 ;;
    --results) results=$2; shift 2 ;;
    --list) list=1; shift ;;
    --only) shift; while [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; do only+=("$1"); shift; done ;;
    -h|--help) usage ;;
    *) echo "rdma.sh: unknown option '$1'" >&2; usage ;;
  esac
done
isnum() { [[ "$1" =~ ^[0-9]+$ ]] && [ "$1" -ge "$2" ]; }
isnum "$ranks" 1 || { echo "rdma.sh: --ranks '$ranks': one count >= 1" >&2; exit 2; }
isnum "$repeat" 1 || { echo "rdma.sh: --repeat '$repeat': a count >= 1" >&2; exit 2; }
isnum "$k" 1 || { echo "rdma.sh: --k '$k': a count >= 1" >&2; exit 2; }
isnum "$rmat_scale" 4 || { echo "rdma.sh: --rmat-scale '$rmat_scale': 4 or more" >&2; exit 2; }
for o in $ops; do case "$o" in spgemm|spmm) ;; *) echo "rdma.sh: --ops '$ops': spgemm and/or spmm" >&2; exit 2 ;; esac; done
for a in $algos; do
  case "$a" in summa|rdma-c|rdma-a|rdma-b|ws-random-a|ws-local-a|ws-local-c) ;;
    *) echo "rdma.sh: --algos: unknown algorithm '$a'" >&2; exit 2 ;; esac
done
if [ -z "$ops" ] || [ -z "$algos" ]; then echo "rdma.sh: --ops and --algos need a value" >&2; exit 2; fi
data=${DSMM_SHARED_DATA:-$repo/../shared/data}

# name | path under $data, tests:PATH under the repository, or rmat (dsmm gen rmat, scale
# --rmat-scale, edge factor 8, abcd 0.6/0.133/0.133/0.133, seed 1, directed, unpermuted).
# A*A flops: hep-th 2.7e5, cit-hepth 7.5e6, rmat14 ~1e7, email-enron 5.2e7.
inputs=(
  "email-enron|graphs/email-enron.mtx.gz"
  "cit-hepth|graphs/cit-HepTh.mtx.gz"
  "hep-th|tests:tests/data/hep-th.mtx.gz"
  "rmat|rmat"
)
if [ $list -eq 1 ]; then
  for e in "${inputs[@]}"; do IFS='|' read -r n p <<<"$e"; echo "$n $p"; done
  exit 0
fi
sel=()
for e in "${inputs[@]}"; do
  IFS='|' read -r name _ <<<"$e"
  if [ ${#only[@]} -gt 0 ]; then
    for o in "${only[@]}"; do [ "$o" = "$name" ] && sel+=("$e"); done
  else
    sel+=("$e")
  fi
done
if [ ${#sel[@]} -eq 0 ]; then
  echo "rdma.sh: no input selected; names: $(bash "$0" "$build" --list | cut -d' ' -f1 | tr '\n' ' ')" >&2
  exit 2
fi

dsmm=$build/bin/dsmm
[ -x "$dsmm" ] || { echo "rdma.sh: $dsmm not built (cmake --build $build --target dsmm_cli)" >&2; exit 1; }
if ! grep -q -- 'rdma-c' <<<"$("$dsmm" spgemm --help 2>/dev/null)"; then
  echo "rdma.sh: $dsmm spgemm has no --algo rdma-c: this build predates the one-sided algorithms" >&2
  exit 1
fi
if ! "$dsmm" model --help >/dev/null 2>&1; then
  echo "rdma.sh: $dsmm has no 'model' command" >&2
  exit 1
fi
# --repeat on the distributed path (the median of R multiplies in one mpirun); else R mpiruns.
inrun_repeat=0
if grep -q -- '--repeat' <<<"$("$dsmm" spgemm --help 2>/dev/null)"; then inrun_repeat=1; fi
. "$repo/scripts/mpi.sh"
mpi_found || { echo "rdma.sh: ${MPIRUN:-mpirun} not found (Open MPI: apt-get install openmpi-bin)" >&2; exit 1; }
mpi_launcher OMP_NUM_THREADS=1 # Open MPI's flags only under Open MPI
ncpu=$(env -u OMP_NUM_THREADS nproc) # GNU nproc honours OMP_NUM_THREADS
export OMP_NUM_THREADS=1
py=${PYTHON:-python3}
command -v "$py" >/dev/null 2>&1 || py=/usr/bin/python3
report=$here/rdma_report.py

out=${out:-$build/bench-results}
mkdir -p "$out"
stamp=$(date +%Y%m%d-%H%M%S)
log=$out/rdma-$stamp.log
jsonl=$out/rdma-$stamp.jsonl
if [ -z "$results" ]; then
  results=$repo/docs/results/rdma-$(date +%Y-%m-%d).txt
elif [ "$results" = none ]; then
  results=""
fi
work=$(mktemp -d "$out/work.XXXXXX")
trap 'rm -rf "$work"' EXIT
: >"$jsonl"

# shellcheck disable=SC1003 # tr deletes quotes and backslashes (JSON-safe detail)
note_json() { # matrix op algo status detail
  printf '{"bench":"rdma_status","matrix":"%s","op":"%s","algo":"%s","status":"%s","detail":"%s"}\n' \
    "$1" "$2" "$3" "$4" "$(tr -d '"\\' <<<"$5")" >>"$jsonl"
}
why() { # exit status, stderr file: one line, dsmm's own messages before mpirun's
  mpi_why "$1" "$2" '^dsmm' "${DSMM_BENCH_TIMEOUT:-600}"
}
run_mpi() { timeout "${DSMM_BENCH_TIMEOUT:-600}" "${mpi[@]}" -n "$ranks" "$@"; }
q() { local s; printf -v s '%q ' "$@"; echo "${s% }"; }

# run_one NAME FILE OP ALGO: one algorithm; its statistics become a JSON line.
run_one() {
  local name=$1 file=$2 op=$3 algo=$4 rc=0 i
  local stats=$work/$name.$op.$algo.json
  local cmd=("$dsmm" "$op" "$file" --algo "$algo" --stats "$stats" -q)
  if [ "$op" = spmm ]; then cmd+=(--k "$k"); fi
  if [ "$op" = spgemm ] && [ "$algo" = summa ]; then cmd+=(--accumulate merge); fi
  if [ $prefetch -eq 1 ]; then cmd+=(--prefetch); fi
  local nrun=1
  if [ $inrun_repeat -eq 1 ]; then cmd+=(--repeat "$repeat"); else nrun=$repeat; fi
  local shown
  shown="$(q "${mpi[@]}") -n $ranks $(q "${cmd[@]}")"
  local lines=()
  for ((i = 0; i < nrun; i++)); do
    rm -f "$stats"
    rc=0
    run_mpi "${cmd[@]}" >"$work/out" 2>"$work/err" || rc=$?
    if [ $rc -ne 0 ] || [ ! -s "$stats" ]; then
      local w; w=$(why $rc "$work/err")
      if [ $rc -eq 0 ]; then w="no statistics written to $stats"; fi
      echo "  $op $algo: FAILED ($w)"
      echo "    command: $shown"
      note_json "$name" "$op" "$algo" failed "$w"
      return 0
    fi
    local line
    if ! line=$("$py" "$report" run-line "$stats" --matrix "$name" --op "$op" --ranks "$ranks" \
        --repeats "$repeat" --cmd "$shown" 2>"$work/err"); then
      echo "  $op $algo: FAILED (unreadable statistics: $(tail -n 1 "$work/err"))"
      note_json "$name" "$op" "$algo" failed "unreadable statistics: $(tail -n 1 "$work/err")"
      return 0
    fi
    lines+=("$line")
  done
  if [ "$nrun" -gt 1 ]; then # no in-run --repeat: keep the run with the median seconds
    line=$(printf '%s\n' "${lines[@]}" | "$py" -c '
import json, sys
rs = [json.loads(l) for l in sys.stdin if l.strip()]
rs.sort(key=lambda r: r["seconds"])
m = rs[len(rs) // 2]
m["repeats"] = len(rs)
m["seconds_all"] = [r["seconds"] for r in rs]
print(json.dumps(m, separators=(",", ":")))')
  fi
  echo "$line" >>"$jsonl"
  "$py" "$report" brief "$line"
}

# run_model NAME FILE OP GRID
run_model() {
  local name=$1 file=$2 op=$3 grid=$4 rc=0
  local mj=$work/$name.$op.model.json
  local cmd=("$dsmm" model "$file" -q --json "$mj")
  if [ -n "$grid" ]; then cmd+=(--grid "$grid"); else cmd+=(--ranks "$ranks"); fi
  if [ "$op" = spmm ]; then cmd+=(--op spmm -k "$k"); fi
  local shown; shown=$(q "${cmd[@]}")
  rm -f "$mj"
  "${cmd[@]}" >"$work/out" 2>"$work/err" || rc=$?
  if [ $rc -ne 0 ] || [ ! -s "$mj" ]; then
    local w; w=$(why $rc "$work/err")
    echo "  $op model: FAILED ($w)"
    echo "    command: $shown"
    note_json "$name" "$op" model failed "$w"
    return 0
  fi
  local line
  line=$("$py" "$report" model-line "$mj" --matrix "$name" --op "$op" --cmd "$shown")
  echo "$line" >>"$jsonl"
  "$py" "$report" brief "$line"
}

main() {
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -1)
machine="$(hostname), ${cpu:-unknown cpu}, $ncpu cpus, $(awk '/MemTotal/ {printf "%.0f GB", $2/1048576}' /proc/meminfo)"
build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[^=]*=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
echo "bench/rdma: one-sided algorithms vs SUMMA and dsmm model, $ranks ranks x 1 thread  machine: $machine  build: ${build_type:-?} ($build)"
echo "  ops: $ops (spmm k = $k)  algorithms: $algos  prefetch: $([ $prefetch -eq 1 ] && echo on || echo off)"
if [ $inrun_repeat -eq 1 ]; then
  echo "  repeats: $repeat in one mpirun (dsmm --repeat: the median multiply)"
else
  echo "  repeats: $repeat mpiruns (this dsmm has no --repeat: the median run is kept)"
fi
echo "  data: $data  log: $log${results:+  results: $results}"
[ "${build_type:-}" = "Release" ] || echo "  note: not a Release build: timings are not meaningful"
if [ $prefetch -eq 1 ] && [[ " $algos " == *" ws-"* ]]; then
  echo "  note: with --prefetch a rank claims its next item before computing the current one; with few items per rank (2 at 4 ranks) the ws-* runs may steal nothing (--no-prefetch lets them)"
fi
if [ "$ranks" -gt "$ncpu" ]; then
  echo "  note: $ranks ranks > $ncpu cores: oversubscribed, ranks share cores; the seconds mean little, the counts are what is checked"
fi
load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo 0)
if awk -v l="$load" 'BEGIN { exit !(l > 0.5) }'; then
  echo "  note: load average $load before starting: other processes share the cores, timings will be noisy"
fi
printf '{"bench":"rdma_meta","machine":"%s","build":"%s","ranks":%d,"ops":"%s","algos":"%s","repeat":%d,"k":%d,"prefetch":%d,"load":%s,"date":"%s"}\n' \
  "${machine//\"/}" "${build_type:-?}" "$ranks" "$ops" "$algos" "$repeat" "$k" "$prefetch" "$load" "$(date -Iseconds)" >>"$jsonl"

for e in "${sel[@]}"; do
  IFS='|' read -r name path <<<"$e"
  if [ "$path" = rmat ]; then
    name=rmat$rmat_scale
    src=$work/$name.mtx
    if ! "$dsmm" gen rmat --scale "$rmat_scale" --edge-factor 8 \
        --abcd 0.6,0.1333333333333,0.1333333333333,0.1333333333334 --seed 1 -o "$src" -q 2>"$work/err"; then
      echo "$name: skipped: dsmm gen failed: $(tail -n 2 "$work/err" | tr '\n' ' ')"
      note_json "$name" all all failed "dsmm gen rmat --scale $rmat_scale: $(tail -n 1 "$work/err")"
      continue
    fi
    echo "$name: dsmm gen rmat --scale $rmat_scale --edge-factor 8 --abcd 0.6,0.1333333333333,0.1333333333333,0.1333333333334 --seed 1 (unpermuted)"
  elif [ "${path#tests:}" != "$path" ]; then
    src=$repo/${path#tests:}
    if [ ! -f "$src" ]; then
      echo "$name: skipped: $src not found"
      note_json "$name" all all skipped "$src not found"
      continue
    fi
    echo "$name: $src"
  else
    src=$data/$path
    if [ ! -f "$src" ]; then
      echo "$name: skipped: $src not found"
      note_json "$name" all all skipped "$src not found"
      continue
    fi
    echo "$name: $src"
  fi
  for op in $ops; do
    for algo in $algos; do run_one "$name" "$src" "$op" "$algo"; done
    # The model on the grid the runs used (any run's statistics say which).
    grid=$(grep -h "\"matrix\":\"$name\",\"op\":\"$op\"" "$jsonl" | sed -n 's/.*"grid":"\([0-9]*x[0-9]*\)".*/\1/p' | head -n 1 || true)
    run_model "$name" "$src" "$op" "$grid"
  done
  rm -f "$work/$name".*.json
  if [ "$path" = rmat ]; then rm -f "$src"; fi
done

"$py" "$report" table "$jsonl"
echo
echo "JSON lines ($jsonl):"
cat "$jsonl"
}

main 2>&1 | tee "$log"
if [ -n "$results" ]; then
  mkdir -p "$(dirname "$results")"
  cp "$log" "$results" # header, per-run lines, tables and every JSON line
  echo "results written to $results"
fi
