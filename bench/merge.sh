#!/usr/bin/env bash
# bench/merge.sh: k-way merge against binary merge of Sparse SUMMA's partial products
# (HipMCL-GPU §IV, evaluated as its §VII.C and Table III). Per input (C = A*A) and rank count:
# `dsmm spgemm --algo summa --accumulate merge` and `--accumulate binary`, each R separate
# mpiruns with --stats; reports the median seconds, the median merge seconds and the merge
# peak bytes (merge_peak_bytes: bytes of CSR arrays of the partial products and merged lists
# held at once, max over ranks; counted, so the same in every run), and binary/k-way ratios.
#
# Usage: bash bench/merge.sh BUILD_DIR [--ranks "4 9"] [--repeat 3] [--threads 1] [--pipeline]
#             [--grid PRxPC] [--only NAME...] [--out DIR] [--list]
# A square grid has one stage per grid column; --grid 1x9 (with --ranks 9) gives 9 stages,
# where binary merge's saving shows.
# BUILD_DIR holds bin/dsmm (cmake --build BUILD_DIR --target dsmm_cli; Release). Inputs come
# from ../shared/data next to the repository, or $DSMM_SHARED_DATA (missing files are
# skipped), and tests/data. Each rank runs --threads OpenMP threads (default 1; the pipeline
# needs 2). Output: a table on stdout and one JSON line per run and per ratio in
# DIR/merge-DATE.jsonl (DIR defaults to BUILD_DIR/bench-results).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)

usage() { sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 1 ] || usage
case "$1" in -h|--help) usage ;; esac
build=$1
shift
ranks_list="4 9"
repeat=3
threads=1
pipeline=0
grid=""
out=""
list=0
only=()
while [ $# -gt 0 ]; do
  case "$1" in
    --ranks) ranks_list=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --pipeline) pipeline=1; shift ;;
    --grid) grid=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --list) list=1; shift ;;
    --only) shift; while [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; do only+=("$1"); shift; done ;;
    -h|--help) usage ;;
    *) echo "merge.sh: unknown option '$1'" >&2; usage ;;
  esac
done
isnum() { [[ "$1" =~ ^[0-9]+$ ]] && [ "$1" -ge "$2" ]; }
for r in $ranks_list; do isnum "$r" 1 || { echo "merge.sh: --ranks '$ranks_list': counts >= 1" >&2; exit 2; }; done
isnum "$repeat" 1 || { echo "merge.sh: --repeat '$repeat': a count >= 1" >&2; exit 2; }
isnum "$threads" 1 || { echo "merge.sh: --threads '$threads': a count >= 1" >&2; exit 2; }
data=${DSMM_SHARED_DATA:-$repo/../shared/data}

# name | path under $data, or tests:PATH under the repository. A*A flops: hep-th 2.7e5,
# email-enron 5.2e7.
inputs=(
  "hep-th|mcl/hep-th.mtx.gz"
  "email-enron|graphs/email-enron.mtx.gz"
)
if [ $list -eq 1 ]; then
  for e in "${inputs[@]}"; do IFS='|' read -r n p <<<"$e"; echo "$n $p"; done
  exit 0
fi

dsmm=$build/bin/dsmm
[ -x "$dsmm" ] || { echo "merge.sh: $dsmm not built (cmake --build $build --target dsmm_cli)" >&2; exit 1; }
# (The help is read whole first: grep -q stops reading at its match, and with pipefail the
# writer's SIGPIPE would fail the pipeline.)
if ! grep -q -- 'binary' <<<"$("$dsmm" spgemm --help 2>&1)"; then
  echo "merge.sh: $dsmm spgemm has no --accumulate binary: this build predates binary merge" >&2
  exit 1
fi
. "$repo/scripts/mpi.sh"
mpi_found || { echo "merge.sh: ${MPIRUN:-mpirun} not found" >&2; exit 1; }
mpi_launcher "OMP_NUM_THREADS=$threads" # Open MPI's flags only under Open MPI
py=${PYTHON:-python3}
command -v "$py" >/dev/null 2>&1 || py=/usr/bin/python3

out=${out:-$build/bench-results}
mkdir -p "$out"
jsonl=$out/merge-$(date +%Y%m%d-%H%M%S).jsonl
work=$(mktemp -d "$out/work.XXXXXX")
trap 'rm -rf "$work"' EXIT
: >"$jsonl"
build_id=$(basename "$(cd "$build" && pwd)")
machine=$(hostname)

# run NAME FILE RANKS ACC: R mpiruns; prints one JSON line (medians) and appends it.
run() {
  local name=$1 file=$2 ranks=$3 acc=$4 i
  local cmd=("$dsmm" spgemm "$file" --algo summa --accumulate "$acc" --threads "$threads" -q)
  if [ $pipeline -eq 1 ]; then cmd+=(--pipeline); fi
  if [ -n "$grid" ]; then cmd+=(--grid "$grid"); fi
  local stats=()
  for ((i = 0; i < repeat; i++)); do
    local s=$work/$name.$ranks.$acc.$i.json
    if ! timeout "${DSMM_BENCH_TIMEOUT:-600}" "${mpi[@]}" -n "$ranks" \
        "${cmd[@]}" --stats "$s" >"$work/out" 2>"$work/err" || [ ! -s "$s" ]; then
      echo "  $name P=$ranks $acc: FAILED: $(grep -E '^dsmm' "$work/err" | head -n 2 | tr '\n' ' ')" >&2
      return 1
    fi
    stats+=("$s")
  done
  "$py" - "$name" "$ranks" "$acc" "$pipeline" "$build_id" "$machine" "${stats[@]}" <<'EOF' | tee -a "$jsonl"
import json, statistics, sys
name, ranks, acc, pipeline, build, machine = sys.argv[1:7]
rs = [json.load(open(f)) for f in sys.argv[7:]]
peaks = sorted({r["merge_peak_bytes"] for r in rs})
print(json.dumps({
    "bench": "merge", "build": build, "machine": machine, "matrix": name, "ranks": int(ranks),
    "grid": rs[0]["grid"], "stages": rs[0]["stages_count"], "threads": rs[0]["threads"],
    "accumulate": acc, "pipeline": int(pipeline), "repeats": len(rs),
    "seconds": statistics.median(r["seconds"] for r in rs),
    "seconds_all": [r["seconds"] for r in rs],
    "merge_seconds": statistics.median(r["merge_seconds"] for r in rs),
    "merge_peak_bytes": peaks[-1], "merge_peak_bytes_varied": len(peaks) > 1,
    "nnz_out": rs[0]["nnz_out"], "flops": rs[0]["flops"]}, separators=(",", ":")))
EOF
}

printf '%-12s %5s %6s %7s %10s %10s %16s\n' matrix ranks stages acc seconds merge_s merge_peak_bytes
for e in "${inputs[@]}"; do
  IFS='|' read -r name path <<<"$e"
  if [ ${#only[@]} -gt 0 ]; then
    keep=0; for o in "${only[@]}"; do [ "$o" = "$name" ] && keep=1; done
    [ $keep -eq 1 ] || continue
  fi
  case "$path" in tests:*) file=$repo/${path#tests:} ;; *) file=$data/$path ;; esac
  if [ ! -f "$file" ]; then echo "  $name: $file missing, skipped" >&2; continue; fi
  for ranks in $ranks_list; do
    k=$(run "$name" "$file" "$ranks" merge) || continue
    b=$(run "$name" "$file" "$ranks" binary) || continue
    "$py" - "$k" "$b" <<'EOF' | tee -a "$jsonl" >/dev/null
import json, sys
k, b = json.loads(sys.argv[1].splitlines()[-1]), json.loads(sys.argv[2].splitlines()[-1])
for r in (k, b):
    print("%-12s %5d %6d %7s %10.4f %10.4f %16d" % (r["matrix"], r["ranks"], r["stages"],
          r["accumulate"], r["seconds"], r["merge_seconds"], r["merge_peak_bytes"]), file=sys.stderr)
ratio = lambda x, y: x / y if y else None
print(json.dumps({"bench": "merge_ratio", "matrix": k["matrix"], "ranks": k["ranks"],
                  "stages": k["stages"], "pipeline": k["pipeline"],
                  "peak_binary_over_kway": ratio(b["merge_peak_bytes"], k["merge_peak_bytes"]),
                  "seconds_binary_over_kway": ratio(b["seconds"], k["seconds"]),
                  "merge_seconds_binary_over_kway": ratio(b["merge_seconds"], k["merge_seconds"])},
                 separators=(",", ":")))
r = ratio(b["merge_peak_bytes"], k["merge_peak_bytes"])
print("%-12s %5d  binary/k-way: peak bytes %s, seconds %.3f" % (k["matrix"], k["ranks"],
      "%.3f" % r if r is not None else "n/a", ratio(b["seconds"], k["seconds"]) or 0),
      file=sys.stderr)
EOF
  done
done 2>&1
echo "JSON lines: $jsonl"
