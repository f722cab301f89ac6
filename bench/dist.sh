#!/usr/bin/env bash
# bench/dist.sh: distributed SpGEMM C = A*A and SpMM C = A*B (B dense n x k, k = 128) on P MPI
# ranks, dsmm's SUMMA (2D grid) against PETSc's MatMatMult (MPIAIJ, 1D rows) at the same P, in
# the same run (docs/bench.md, "Distributed (SUMMA)"). Per matrix and P: dsmm spgemm, dsmm spmm
# (each its own mpirun, --stats read back), then bench/dist_petsc (both ops in one mpirun).
#
# Usage: bash bench/dist.sh BUILD_DIR [--ranks "1 2 4"] [--ops "spgemm spmm"] [--repeat 3]
#             [--k 128] [--threads 1] [--quick] [--only NAME...] [--rmat-scale 14]
#             [--systems "dsmm petsc"] [--dsmm-args "--grid 2x1 --prefetch"] [--out DIR]
#             [--results FILE|none] [--list]
# BUILD_DIR holds bin/dsmm, bench/bench_spgemm (prepares the PETSc input) and bench/dist_petsc
# (built when configure found PETSc); use a Release build. Inputs come from ../shared/data next
# to the repository, or $DSMM_SHARED_DATA; missing files are skipped. --threads: OpenMP threads
# per rank (1: one core per rank, as PETSc). Output: the table on stdout; everything also in
# DIR/dist-DATE.log and DIR/dist-DATE.jsonl (DIR defaults to BUILD_DIR/bench-results), and the
# log with every JSON line in docs/results/dist-YYYY-MM-DD.txt unless --results says otherwise.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
here=$repo/bench

usage() { sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 1 ] || usage
build=$1
shift
ranks="1 2 4"
ops="spgemm spmm"
repeat=3
k=128
threads=1
quick=0
rmat_scale=14
systems="dsmm petsc"
dsmm_args=""
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
    --threads) threads=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    --rmat-scale) rmat_scale=$2; shift 2 ;;
    --systems) systems=$2; shift 2 ;;
    --dsmm-args) dsmm_args=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --results) results=$2; shift 2 ;;
    --list) list=1; shift ;;
    --only) shift; while [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; do only+=("$1"); shift; done ;;
    -h|--help) usage ;;
    *) echo "dist.sh: unknown option '$1'" >&2; usage ;;
  esac
done
isnum() { [[ "$1" =~ ^[0-9]+$ ]] && [ "$1" -ge "$2" ]; }
for p in $ranks; do isnum "$p" 1 || { echo "dist.sh: --ranks '$ranks': counts >= 1" >&2; exit 2; }; done
for o in $ops; do case "$o" in spgemm|spmm) ;; *) echo "dist.sh: --ops '$ops': spgemm and/or spmm" >&2; exit 2 ;; esac; done
for s in $systems; do case "$s" in dsmm|petsc) ;; *) echo "dist.sh: --systems '$systems': dsmm and/or petsc" >&2; exit 2 ;; esac; done
isnum "$repeat" 1 || { echo "dist.sh: --repeat '$repeat': a count >= 1" >&2; exit 2; }
isnum "$k" 1 || { echo "dist.sh: --k '$k': a count >= 1" >&2; exit 2; }
isnum "$threads" 1 || { echo "dist.sh: --threads '$threads': a count >= 1" >&2; exit 2; }
isnum "$rmat_scale" 4 || { echo "dist.sh: --rmat-scale '$rmat_scale': 4 or more" >&2; exit 2; }
if [ -z "$ranks" ] || [ -z "$ops" ] || [ -z "$systems" ]; then
  echo "dist.sh: --ranks, --ops and --systems need a value" >&2
  exit 2
fi
data=${DSMM_SHARED_DATA:-$repo/../shared/data}

# name | path under $data, or rmat (dsmm gen rmat --scale --rmat-scale --symmetric) | q: in
# the quick set (--quick: email-enron and R-MAT scale 12).
# All are multiplied as stored (symmetric files expanded; pattern entries are 1); flops(A*A)
# from 5e7 (email-enron) to 4.6e8 (ego-twitter), where PETSc at P = 2 was slower than at P = 1.
inputs=(
  "email-enron|graphs/email-enron.mtx.gz|q"
  "ego-twitter|graphs/ego-twitter-undirected.mtx.gz|-"
  "as-caida|graphs/as-caida20071105.mtx.gz|-"
  "ca-astroph|graphs/ca-astroph-cc1.mtx.gz|-"
  "cit-hepph|graphs/cit-HepPh.mtx.gz|-"
  "cage11|matrices/cage11.mtx.gz|-"
  "rmat|rmat|q"
)
if [ $list -eq 1 ]; then
  for e in "${inputs[@]}"; do
    IFS='|' read -r n p q <<<"$e"
    if [ "$q" = q ]; then echo "$n $p quick"; else echo "$n $p"; fi
  done
  exit 0
fi
sel=()
for e in "${inputs[@]}"; do
  IFS='|' read -r name _ inquick <<<"$e"
  if [ ${#only[@]} -gt 0 ]; then
    for o in "${only[@]}"; do [ "$o" = "$name" ] && sel+=("$e"); done
  elif [ $quick -eq 0 ] || [ "$inquick" = "q" ]; then
    sel+=("$e")
  fi
done
if [ ${#sel[@]} -eq 0 ]; then
  echo "dsmm dist.sh: no input selected; names: $(bash "$0" "$build" --list | cut -d' ' -f1 | tr '\n' ' ')" >&2
  exit 2
fi
if [ $quick -eq 1 ] && [ ${#only[@]} -eq 0 ] && [ "$rmat_scale" -eq 14 ]; then
  rmat_scale=12 # --quick: a small R-MAT unless --rmat-scale says otherwise
fi

dsmm=$build/bin/dsmm
prep=$build/bench/bench_spgemm
petsc=$build/bench/dist_petsc
have() { case " $systems " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
notes=()
[ -x "$dsmm" ] || { echo "dist.sh: $dsmm not built (cmake --build $build --target dsmm_cli)" >&2; exit 1; }
if have petsc; then
  if [ ! -x "$petsc" ]; then
    notes+=("PETSc: skipped ($petsc not built: libpetsc-real-dev missing at configure time)")
    systems=${systems/petsc/}
  elif [ ! -x "$prep" ]; then
    notes+=("PETSc: skipped ($prep not built: cmake --build $build --target bench_spgemm)")
    systems=${systems/petsc/}
  fi
fi
. "$repo/scripts/mpi.sh"
mpi_found || { echo "dist.sh: ${MPIRUN:-mpirun} not found (Open MPI: apt-get install openmpi-bin)" >&2; exit 1; }
mpi_launcher # the launch command, with Open MPI's flags only under Open MPI
ncpu=$(env -u OMP_NUM_THREADS nproc) # GNU nproc honours OMP_NUM_THREADS
export OMP_NUM_THREADS=$threads
py=${PYTHON:-python3}
command -v "$py" >/dev/null 2>&1 || py=/usr/bin/python3
report=$here/dist_report.py
# `dsmm report FILE` (a summary of one stats file) runs when this build has it.
has_report=0
if "$dsmm" report --help >/dev/null 2>&1; then has_report=1; fi
# The issue 5 options of dsmm spgemm/spmm; without them the dsmm runs fail and are noted.
dsmm_ready=1
if ! grep -q -- '--algo' <<<"$("$dsmm" spgemm --help 2>/dev/null)"; then dsmm_ready=0; fi

out=${out:-$build/bench-results}
mkdir -p "$out"
stamp=$(date +%Y%m%d-%H%M%S)
log=$out/dist-$stamp.log
jsonl=$out/dist-$stamp.jsonl
if [ -z "$results" ]; then
  results=$repo/docs/results/dist-$(date +%Y-%m-%d).txt
elif [ "$results" = none ]; then
  results=""
fi
work=$(mktemp -d "$out/work.XXXXXX")
trap 'rm -rf "$work"' EXIT
: >"$jsonl"

# shellcheck disable=SC1003 # tr deletes quotes and backslashes (JSON-safe detail)
note_json() { # matrix system op ranks status detail
  printf '{"bench":"dist_status","matrix":"%s","system":"%s","op":"%s","ranks":%s,"status":"%s","detail":"%s"}\n' \
    "$1" "$2" "$3" "$4" "$5" "$(tr -d '"\\' <<<"$6")" >>"$jsonl"
}
why() { # exit status, stderr file: one line, the programs' own messages before mpirun's
  mpi_why "$1" "$2" '^(dsmm|dist_petsc|\[[0-9]+\]PETSC ERROR)' "${DSMM_BENCH_TIMEOUT:-3600}"
}
run_mpi() { timeout "${DSMM_BENCH_TIMEOUT:-3600}" "${mpi[@]}" -n "$@"; }

# run_dsmm NAME FILE OP P: one dsmm run; its stats become a JSON line.
run_dsmm() {
  local name=$1 file=$2 op=$3 p=$4 rc=0
  local stats=$work/$name.$op.$p.json
  local cmd=("$dsmm" "$op" "$file" --algo summa --stats "$stats" --repeat "$repeat" -t "$threads" -q)
  if [ "$op" = spmm ]; then cmd+=(--k "$k"); fi
  # shellcheck disable=SC2206 # word splitting of the extra options is wanted
  if [ -n "$dsmm_args" ]; then cmd+=($dsmm_args); fi
  rm -f "$stats"
  run_mpi "$p" "${cmd[@]}" >"$work/out" 2>"$work/err" || rc=$?
  if [ $rc -ne 0 ] || [ ! -s "$stats" ]; then
    local w; w=$(why $rc "$work/err")
    if [ $rc -eq 0 ]; then w="no statistics written to $stats"; fi
    echo "  dsmm   $op P=$p: FAILED ($w)"
    echo "    command: ${mpi[*]} -n $p ${cmd[*]}"
    note_json "$name" dsmm "$op" "$p" failed "$w"
    return 0
  fi
  local line
  if ! line=$("$py" "$report" dsmm-line "$stats" --matrix "$name" --op "$op" --ranks "$p" \
      --k "$k" --repeats "$repeat" --threads "$threads" 2>"$work/err"); then
    echo "  dsmm   $op P=$p: FAILED (unreadable statistics: $(tail -n 1 "$work/err"))"
    note_json "$name" dsmm "$op" "$p" failed "unreadable statistics: $(tail -n 1 "$work/err")"
    return 0
  fi
  echo "$line" >>"$jsonl"
  "$py" "$report" brief "$line"
  if [ $has_report -eq 1 ]; then
    "$dsmm" report "$stats" 2>&1 | sed '/^[[:space:]]*$/d; s/^/      /' || echo "      (dsmm report failed)"
  fi
}

# run_petsc NAME CSR P: both ops in one process group.
run_petsc() {
  local name=$1 csr=$2 p=$3 rc=0
  local ops_csv=${ops// /,}
  run_mpi "$p" "$petsc" "$csr" --ops "$ops_csv" --k "$k" --repeat "$repeat" --name "$name" \
    >"$work/out" 2>"$work/err" || rc=$?
  local n=0 line
  while IFS= read -r line; do
    case "$line" in
      '{"bench":"dist"'*) echo "$line" >>"$jsonl"; "$py" "$report" brief "$line"; n=$((n + 1)) ;;
    esac
  done <"$work/out"
  if [ $rc -ne 0 ] || [ $n -eq 0 ]; then
    local w; w=$(why $rc "$work/err")
    echo "  petsc  P=$p: FAILED ($w)"
    note_json "$name" petsc "$ops_csv" "$p" failed "$w"
  fi
}

main() {

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -1)
machine="$(hostname), ${cpu:-unknown cpu}, $ncpu cpus, $(awk '/MemTotal/ {printf "%.0f GB", $2/1048576}' /proc/meminfo)"
build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[^=]*=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
echo "bench/dist: C = A*A and C = A*B (k = $k) on P ranks  machine: $machine  build: ${build_type:-?} ($build)"
echo "  systems: $systems  ranks: $ranks  ops: $ops  repeats: $repeat (+1 warm-up)  threads per rank: $threads"
echo "  dsmm: SUMMA (--algo summa${dsmm_args:+ $dsmm_args})  PETSc: MatMatMult, MPIAIJ (x MPIDENSE), 1D rows"
echo "  data: $data  log: $log${results:+  results: $results}"
for n in "${notes[@]}"; do echo "  note: $n"; done
[ "${build_type:-}" = "Release" ] || echo "  note: not a Release build: dsmm timings are not meaningful"
[ $dsmm_ready -eq 1 ] || echo "  note: $dsmm spgemm has no --algo: this build predates the distributed CLI, its runs will fail"
maxp=0
for p in $ranks; do if [ "$p" -gt "$maxp" ]; then maxp=$p; fi; done
if [ $((maxp * threads)) -gt "$ncpu" ]; then
  echo "  note: $maxp ranks x $threads threads > $ncpu cores: oversubscribed, those timings share cores"
fi
load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo 0)
if awk -v l="$load" 'BEGIN { exit !(l > 0.5) }'; then
  echo "  note: load average $load before starting: other processes share the cores, timings will be noisy"
fi
printf '{"bench":"dist_meta","machine":"%s","build":"%s","ranks":"%s","ops":"%s","repeat":%d,"k":%d,"threads":%d,"dsmm_args":"%s","load":%s,"date":"%s"}\n' \
  "${machine//\"/}" "${build_type:-?}" "$ranks" "$ops" "$repeat" "$k" "$threads" "${dsmm_args//\"/}" "$load" "$(date -Iseconds)" >>"$jsonl"

mem_kb=$(awk '/MemAvailable/ {print $2}' /proc/meminfo)
for e in "${sel[@]}"; do
  IFS='|' read -r name path _ <<<"$e"
  if [ "$path" = rmat ]; then
    name=rmat$rmat_scale
    src=$work/$name.bin
    if ! "$dsmm" gen rmat --scale "$rmat_scale" --symmetric --seed 1 -o "$src" -q 2>"$work/err"; then
      echo "$name: skipped: dsmm gen failed: $(tail -n 2 "$work/err" | tr '\n' ' ')"
      note_json "$name" all all 0 failed "dsmm gen rmat --scale $rmat_scale: $(tail -n 1 "$work/err")"
      continue
    fi
  else
    src=$data/$path
    if [ ! -f "$src" ]; then
      echo "$name: skipped: $src not found"
      note_json "$name" all all 0 skipped "$src not found"
      continue
    fi
  fi
  csr=""
  if [ -x "$prep" ]; then
    csr=$work/$name.csr
    if pl=$("$prep" "$src" --export "$csr" --no-run --name "$name" 2>"$work/err"); then
      echo "$pl" >>"$jsonl"
      "$py" "$report" brief "$pl"
      est=$(sed -n 's/.*"nnz_c_est":\([0-9.e+]*\).*/\1/p' <<<"$pl")
      # ~16 bytes per entry of C, two Cs alive at once (PETSc's warm-up C is freed first).
      if [ -n "$est" ] && awk -v e="$est" -v m="$mem_kb" 'BEGIN { exit !(e * 32 > 0.7 * m * 1024) }'; then
        echo "$name: skipped: nnz(C) ~$est needs more than 70% of the memory available"
        note_json "$name" all all 0 skipped "nnz(C) ~$est: not enough memory"
        rm -f "$csr"
        if [ "$path" = rmat ]; then rm -f "$src"; fi
        continue
      fi
    else
      echo "$name: PETSc input not prepared: $(tail -n 2 "$work/err" | tr '\n' ' ')"
      note_json "$name" petsc all 0 failed "prepare: $(tail -n 1 "$work/err")"
      csr=""
    fi
  else
    echo "$name:"
  fi
  for p in $ranks; do
    if have dsmm; then
      for op in $ops; do run_dsmm "$name" "$src" "$op" "$p"; done
    fi
    if have petsc && [ -n "$csr" ]; then run_petsc "$name" "$csr" "$p"; fi
  done
  rm -f "$csr" "$work/$name".*.json
  if [ "$path" = rmat ]; then rm -f "$src"; fi
done

echo
"$py" "$report" table "$jsonl"
echo
echo "JSON lines ($jsonl):"
cat "$jsonl"
}

main 2>&1 | tee "$log"
if [ -n "$results" ]; then
  mkdir -p "$(dirname "$results")"
  cp "$log" "$results" # header, per-run lines, table and every JSON line
  echo "results written to $results"
fi
