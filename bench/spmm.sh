#!/usr/bin/env bash
# bench/spmm.sh: local SpMM C = A * B (B dense n x k), dsmm vs SuiteSparse:GraphBLAS (GrB_mxm
# into a new C, and C += A*B into a full C) and scipy, for each k and value type, in one run on
# this machine (docs/bench.md). STREAM's triad runs first: it is the bandwidth the compulsory
# traffic (A, B and C each moved once) is measured against. Each system runs in its own
# process per case on the same raw CSR export, and the runner checks that all results agree
# (y = C w and z = C^T u within 1e-3 of their norm for float, 1e-9 for double).
#
# Usage: bash bench/spmm.sh BUILD_DIR [--threads "1 2"] [--k "1 8 64 256"]
#                           [--types "float double"] [--repeat 5] [--min-time 0.1] [--quick]
#                           [--only NAME...]
#                           [--alg auto] [--systems "dsmm rows col graphblas scipy"] [--llc SIZE]
#                           [--rounds 3] [--out DIR] [--list]
# BUILD_DIR holds bench/bench_spmm, bench/stream and bench/bench_spgemm (which prepares the
# inputs), and bench/spmm_graphblas when GraphBLAS was found; use a Release build. Inputs come
# from ../shared/data next to the repository, or $DSMM_SHARED_DATA. Output: the tables on
# stdout, everything also in DIR/spmm-DATE.log and one JSON line per run in
# DIR/spmm-DATE.jsonl (DIR defaults to BUILD_DIR/bench-results, ignored by git).
# Each system times at least --repeat runs and, with --min-time S, as many more as fill S
# seconds at its warm-up's pace (products of microseconds: a median of 5 single runs there
# varied by 2x between runs of the benchmark). With --rounds R (3 by default) every case runs
# all its systems R times, in turn (the order reversed every other round), and the tables give
# each system's median over the rounds and each ratio as the median of the rounds' ratios:
# other tenants of a VM slowed single runs by up to 2x for seconds at a time, which a system
# timed in one window alone took in full and the others did not.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
here=$repo/bench

usage() { sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 1 ] || usage
build=$1
shift
threads="1 2"
ks=""
types="float double"
repeat=5
min_time=0.1
rounds=3
quick=0
alg=auto
systems="dsmm rows col graphblas scipy"
llc=""
out=""
list=0
only=()
while [ $# -gt 0 ]; do
  case "$1" in
    --threads) threads=$2; shift 2 ;;
    --k) ks=$2; shift 2 ;;
    --types) types=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --min-time) min_time=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    --alg) alg=$2; shift 2 ;;
    --systems) systems=$2; shift 2 ;;
    --llc) llc=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --list) list=1; shift ;;
    --only) shift; while [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; do only+=("$1"); shift; done ;;
    -h|--help) usage ;;
    *) echo "spmm.sh: unknown option '$1'" >&2; usage ;;
  esac
done
data=${DSMM_SHARED_DATA:-$repo/../shared/data}
[ -n "$ks" ] || { [ $quick -eq 1 ] && ks="1 64" || ks="1 8 64 256"; }

# Bad values stop here, before any run, with the option named.
isnum() { [[ "$1" =~ ^[0-9]+$ ]] && [ "$1" -ge "$2" ]; }
for t in $threads; do isnum "$t" 1 || { echo "spmm.sh: --threads '$threads': counts >= 1" >&2; exit 2; }; done
for k in $ks; do isnum "$k" 1 || { echo "spmm.sh: --k '$ks': column counts >= 1" >&2; exit 2; }; done
for ty in $types; do
  case "$ty" in float|double) ;; *) echo "spmm.sh: --types '$types': float and/or double" >&2; exit 2 ;; esac
done
isnum "$repeat" 1 || { echo "spmm.sh: --repeat '$repeat': a count >= 1" >&2; exit 2; }
isnum "$rounds" 1 || { echo "spmm.sh: --rounds '$rounds': a count >= 1" >&2; exit 2; }
[[ "$min_time" =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "spmm.sh: --min-time '$min_time': seconds >= 0" >&2; exit 2; }
case "$alg" in auto|row|ref) ;; *) echo "spmm.sh: --alg '$alg': auto, row or ref (col runs as its own system)" >&2; exit 2 ;; esac
for s in $systems; do
  case "$s" in dsmm|rows|col|graphblas|scipy) ;; *) echo "spmm.sh: --systems: unknown '$s' (dsmm rows col graphblas scipy)" >&2; exit 2 ;; esac
done
[ -n "$threads" ] && [ -n "$ks" ] && [ -n "$types" ] || { echo "spmm.sh: --threads, --k and --types need a value" >&2; exit 2; }

# name | path under $data (or rmatd:SCALE) | quick set. All are multiplied as stored (the
# graphs and matrices of ../shared/data); R-MAT as in bench/spgemm.sh (directed, Graph500).
inputs=(
  "facebook|graphs/facebook-combined.mtx.gz|-"
  "as-caida|graphs/as-caida20071105.mtx.gz|-"
  "ca-condmat|graphs/ca-condmat-cc1.mtx.gz|q"
  "ca-astroph|graphs/ca-astroph-cc1.mtx.gz|-"
  "email-enron|graphs/email-enron.mtx.gz|-"
  "cit-hepth|graphs/cit-HepTh.mtx.gz|-"
  "cit-hepph|graphs/cit-HepPh.mtx.gz|-"
  "ego-twitter|graphs/ego-twitter-undirected.mtx.gz|-"
  "p2p-gnutella08|graphs/p2p-Gnutella08.edgelist.gz|-"
  "bcsstk13|matrices/bcsstk13.mtx.gz|q"
  "fe_4elt2|matrices/fe_4elt2.mtx.gz|q"
  "cage10|matrices/cage10.mtx.gz|-"
  "cage11|matrices/cage11.mtx.gz|-"
  "EX5|matrices/EX5.mtx.gz|-"
  "delaunay_n16|matrices/delaunay_n16.mtx.gz|-"
  "ct2010|matrices/ct2010.mtx.gz|-"
  "rmat14|rmatd:14|q"
  "rmat18|rmatd:18|-"
)
if [ $list -eq 1 ]; then
  for e in "${inputs[@]}"; do IFS='|' read -r n p q <<<"$e"; echo "$n $p$([ "$q" = q ] && echo ' quick')"; done
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
  echo "spmm.sh: no input selected; names: $(bash "$0" "$build" --list | cut -d' ' -f1 | tr '\n' ' ')" >&2
  exit 2
fi

bench=$build/bench/bench_spmm
prep=$build/bench/bench_spgemm
stream=$build/bench/stream
for p in "$bench" "$prep" "$stream"; do
  [ -x "$p" ] || { echo "spmm.sh: $p not built (cmake --build $build --target bench_spmm bench_spgemm stream)" >&2; exit 1; }
done
have() { case " $systems " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
notes=()
gb=$build/bench/spmm_graphblas
scipy_py=${SCIPY_PYTHON:-/usr/bin/python3}
if have graphblas && [ ! -x "$gb" ]; then
  notes+=("GraphBLAS: skipped ($gb not built: libgraphblas-dev missing at configure time)")
  systems=${systems/graphblas/}
fi
if have scipy && ! "$scipy_py" -c 'import scipy.sparse, numpy' 2>/dev/null; then
  notes+=("scipy: skipped ($scipy_py cannot import scipy.sparse; apt-get install python3-scipy or set SCIPY_PYTHON)")
  systems=${systems/scipy/}
fi
[ -d "$data" ] || notes+=("data: $data not found: only the R-MAT inputs run (set DSMM_SHARED_DATA)")
py=${PYTHON:-python3}
command -v "$py" >/dev/null 2>&1 || py=/usr/bin/python3
tmax=${threads##* }
tmax=${tmax:-1}

# The last-level cache: --llc, else the largest cache level sysfs lists, else getconf.
to_bytes() { # 32768K, 32M, 33554432 -> bytes; nothing for anything else
  [[ "$1" =~ ^[0-9]+[KkMmGg]?$ ]] || return 0
  awk -v s="$1" 'BEGIN { n = s + 0; u = toupper(substr(s, length(s)));
    if (u == "K") n *= 1024; else if (u == "M") n *= 1048576; else if (u == "G") n *= 1073741824;
    printf "%.0f", n }'
}
if [ -n "$llc" ]; then
  llc_bytes=$(to_bytes "$llc")
  isnum "${llc_bytes:-x}" 1 || { echo "spmm.sh: --llc '$llc': a size like 32M or 33554432" >&2; exit 2; }
else
  best=0
  for d in /sys/devices/system/cpu/cpu0/cache/index*; do
    [ -r "$d/level" ] && [ -r "$d/size" ] || continue
    lv=$(cat "$d/level")
    [ "$lv" -gt "$best" ] && { best=$lv; llc=$(cat "$d/size"); }
  done
  [ -n "$llc" ] || llc=$(getconf LEVEL3_CACHE_SIZE 2>/dev/null || echo 0)
  llc_bytes=$(to_bytes "$llc")
  llc_bytes=${llc_bytes:-0}
  [ "$llc_bytes" -gt 0 ] || notes+=("last-level cache size unknown: the B-in-cache line is left out (use --llc)")
fi

out=${out:-$build/bench-results}
mkdir -p "$out"
stamp=$(date +%Y%m%d-%H%M%S)
log=$out/spmm-$stamp.log
jsonl=$out/spmm-$stamp.jsonl
work=$(mktemp -d "$out/work.XXXXXX")
trap 'rm -rf "$work"' EXIT
: >"$jsonl"
exec > >(tee -a "$log") 2>&1

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -1)
machine="$(hostname), ${cpu:-unknown cpu}, $(nproc) cpus, $(awk '/MemTotal/ {printf "%.0f GB", $2/1048576}' /proc/meminfo)"
build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[^=]*=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
echo "bench/spmm: C = A*B, B dense n x k  machine: $machine  build: ${build_type:-?} ($build)"
echo "  systems: $systems  threads: $threads  k: $ks  types: $types  repeats: $repeat (+1 warm-up), at least ${min_time} s of runs  rounds: $rounds  alg: $alg"
echo "  last-level cache: $((llc_bytes / 1048576)) MiB  data: $data  log: $log"
for n in "${notes[@]}"; do echo "  note: $n"; done
[ "${build_type:-}" = "Release" ] || echo "  note: not a Release build: dsmm timings are not meaningful"
load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo 0)
if awk -v l="$load" 'BEGIN { exit !(l > 0.5) }'; then
  echo "  note: load average $load before starting: other processes share the cores, timings will be noisy"
fi
printf '{"bench":"spmm_meta","machine":"%s","build":"%s","threads":"%s","k":"%s","types":"%s","repeat":%d,"min_time":%s,"rounds":%d,"alg":"%s","llc_bytes":%s,"load":%s}\n' \
  "${machine//\"/}" "${build_type:-?}" "$threads" "$ks" "$types" "$repeat" "$min_time" "$rounds" "$alg" "$llc_bytes" "$load" >>"$jsonl"

field() { sed -n "s/.*\"$1\":\"\{0,1\}\([^,\"}]*\).*/\1/p" <<<"$2"; }
note_json() { # name k type label threads status detail
  printf '{"bench":"spmm_status","name":"%s","k":%s,"type":"%s","label":"%s","threads":%s,"status":"%s","detail":"%s"}\n' \
    "$1" "$2" "$3" "$4" "$5" "$6" "${7//\"/\'}" >>"$jsonl"
}

# STREAM first, on the quiet machine the SpMM runs will see.
if ! sline=$(timeout 600 "$stream" --threads "${threads// /,}" 2>"$work/err"); then
  echo "spmm.sh: stream failed: $(tail -n 2 "$work/err" | tr '\n' ' ')" >&2
  exit 1
fi
echo "$sline" >>"$jsonl"
printf '  STREAM triad:'
for t in $threads; do printf ' %st %s GB/s' "$t" "$(field "gbps_${t}t" "$sline")"; done
echo

# run_one NAME K TYPE LABEL THREADS CMD...: runs CMD, appends its JSON line (with the label)
# to the log, notes failures.
run_one() {
  local name=$1 k=$2 ty=$3 label=$4 t=$5
  shift 5
  local line rc=0
  line=$(timeout "${DSMM_BENCH_TIMEOUT:-3600}" env OMP_NUM_THREADS="$t" "$@" 2>"$work/err") || rc=$?
  if [ $rc -ne 0 ] || [ -z "$line" ]; then
    local why
    why=$(tail -n 3 "$work/err" | tr '\n' ' ' | cut -c1-300)
    [ $rc -eq 124 ] && why="timed out after ${DSMM_BENCH_TIMEOUT:-3600} s"
    echo "    $label ${t}t: FAILED (exit $rc): $why"
    note_json "$name" "$k" "$ty" "$label" "$t" failed "exit $rc: $why"
    return 1
  fi
  # The label, and the thread count asked for: dsmm reports the threads it used, fewer on
  # small products.
  echo "${line%\}},\"label\":\"$label\",\"run_threads\":$t,\"round\":$round}" >>"$jsonl"
  printf '    %-9s %st: %9.3f ms  %7.2f GF/s\n' "$label" "$t" \
    "$(awk -v s="$(field median_s "$line")" 'BEGIN { print s * 1000 }')" "$(field gflops "$line")"
}

# The systems of one case, one round each (name, k, ty, base, common, round and checks are
# the case loop's). The check files and dsmm's untimed cache model come from round 1 only.
# run_checked LABEL THREADS FILE CMD...: run_one with --check FILE in round 1, which adds the
# file to the case's checks when the run succeeds.
run_checked() {
  local label=$1 t=$2 file=$3
  shift 3
  if [ "$round" -gt 1 ]; then
    run_one "$name" "$k" "$ty" "$label" "$t" "$@" || true
  elif run_one "$name" "$k" "$ty" "$label" "$t" "$@" --check "$file"; then
    checks+=("$label:$t:$file")
  fi
}
run_dsmm() {
  local t model
  for t in $threads; do
    # At the top thread count, the traffic model of B's L2 misses (bench/spmm_model.h)
    # and the random-gather rates, untimed, for the cache model (%CM).
    model=()
    if [ "$t" = "$tmax" ] && [ "$alg" != ref ] && [ "$round" -eq 1 ]; then model=(--l2-model 0); fi
    run_checked dsmm "$t" "$base.dsmm.$t.chk" "$bench" "$csr" "${common[@]}" --threads "$t" \
      --alg "$alg" "${model[@]}"
  done
}
run_rows() {
  # The row-wise kernel on A's rows stored by length (dsmm_spmm_rows, prepared untimed, as a
  # caller repeating the product would): the same bits as dsmm's row-wise runs.
  if [ "$alg" = ref ]; then return 0; fi
  run_checked rows "$tmax" "$base.rows.$tmax.chk" "$bench" "$csr" "${common[@]}" --threads "$tmax" \
    --alg "$alg" --rows
}
run_col() {
  # col/row from rounds of the two kernels alternated in one process (--pair), with dsmm's
  # --alg unless that is the reference kernel.
  local pair=()
  if [ "$alg" != ref ]; then pair=(--pair "$alg"); fi
  run_checked col "$tmax" "$base.col.$tmax.chk" "$bench" "$csr" "${common[@]}" --threads "$tmax" \
    --alg col "${pair[@]}"
}
run_graphblas() {
  local mode t
  for mode in new accum; do
    for t in $threads; do
      run_checked "grb-$mode" "$t" "$base.grb-$mode.$t.chk" "$gb" "$csr" "${common[@]}" \
        --threads "$t" --mode "$mode"
    done
  done
}
run_scipy() {
  run_checked scipy 1 "$base.scipy.chk" "$scipy_py" "$here/spmm_scipy.py" "$csr" "${common[@]}"
}

mem_kb=$(awk '/MemAvailable/ {print $2}' /proc/meminfo)
for e in "${sel[@]}"; do
  IFS='|' read -r name path _ <<<"$e"
  case "$path" in
    rmat*:*) src=$path ;;
    *) src=$data/$path
       if [ ! -f "$src" ]; then
         echo "$name: skipped: $src not found"
         note_json "$name" 0 - all 0 skipped "$src not found"
         continue
       fi ;;
  esac
  csr=$work/$name.csr
  if ! pline=$("$prep" "$src" --export "$csr" --no-run --name "$name" 2>"$work/err"); then
    echo "$name: skipped: preparing failed: $(tail -n 2 "$work/err" | tr '\n' ' ')"
    note_json "$name" 0 - all 0 failed "prepare: $(tail -n 1 "$work/err")"
    continue
  fi
  echo "$pline" >>"$jsonl"
  n=$(field n "$pline")
  nnz=$(field nnz_a "$pline")
  echo "$name: n $n, nnz(A) $nnz"
  for k in $ks; do
    for ty in $types; do
      w=8; rtol=1e-9
      [ "$ty" = float ] && { w=4; rtol=1e-3; }
      # B and C, a second C (a GraphBLAS format change, scipy's check copy in double) and A:
      # skip the case when that exceeds 70% of the memory available at the start.
      need=$(awk -v n="$n" -v k="$k" -v w="$w" -v z="$nnz" 'BEGIN { printf "%.0f", n * k * (2 * w + 8) + 24 * z }')
      if awk -v e="$need" -v m="$mem_kb" 'BEGIN { exit !(e > 0.7 * m * 1024) }'; then
        msg=$(awk -v e="$need" -v m="$mem_kb" 'BEGIN { printf "needs ~%.1f GB, %.1f GB available", e / 2^30, m / 2^20 }')
        echo "  k=$k $ty: skipped: $msg"
        note_json "$name" "$k" "$ty" all 0 skipped "$msg"
        continue
      fi
      echo "  k=$k $ty:"
      base=$work/$name.$k.$ty
      common=(--k "$k" --type "$ty" --repeat "$repeat" --min-time "$min_time" --name "$name")
      checks=()
      order=()
      for s in dsmm rows col graphblas scipy; do have "$s" && order+=("$s"); done
      for ((round = 1; round <= rounds; round++)); do
        # Odd rounds in the listed order, even ones reversed; the check files from round 1.
        seq_=("${order[@]}")
        if [ $((round % 2)) -eq 0 ]; then
          seq_=()
          for ((i = ${#order[@]} - 1; i >= 0; i--)); do seq_+=("${order[$i]}"); done
        fi
        if [ "$rounds" -gt 1 ]; then echo "   round $round:"; fi
        for s in "${seq_[@]}"; do "run_$s"; done
      done
      # Agreement: every check file against the first one.
      if [ ${#checks[@]} -ge 1 ]; then
        IFS=: read -r rsys rt rfile <<<"${checks[0]}"
        for c in "${checks[@]:1}"; do
          IFS=: read -r csys ct cfile <<<"$c"
          if res=$("$bench" --compare "$rfile" "$cfile" --rtol "$rtol" 2>&1); then
            note_json "$name" "$k" "$ty" "$csys" "$ct" agree "vs $rsys ${rt}t: $res"
          else
            echo "    DISAGREE: $csys ${ct}t vs $rsys ${rt}t: $res"
            note_json "$name" "$k" "$ty" "$csys" "$ct" disagree "vs $rsys ${rt}t: $res"
          fi
        done
      fi
      rm -f "$base".*.chk
    done
  done
  rm -f "$csr"
done

echo
"$py" - "$jsonl" <<'PY'
import json, math, sys

path = sys.argv[1]
recs = [json.loads(l) for l in open(path) if l.strip()]
meta = next((r for r in recs if r.get("bench") == "spmm_meta"), {})
stream = next((r for r in recs if r.get("bench") == "stream"), {})
ts = [int(t) for t in str(meta.get("threads", "1 2")).split()]
t1, tm = ts[0], ts[-1]
llc = meta.get("llc_bytes", 0)
prep, runs, status, cases = {}, {}, {}, []
for r in recs:
    b = r.get("bench")
    if b == "spgemm_prepare":
        prep[r["name"]] = r
    elif b == "spmm":
        case = (r["name"], int(r["k"]), r["type"])
        if case not in cases: cases.append(case)
        runs.setdefault(case + (r["label"], int(r["run_threads"])), []).append(r)
    elif b == "spmm_status":
        status.setdefault((r["name"], int(r["k"]), r["type"]), []).append(r)

def med(xs):
    xs = sorted(x for x in xs if x is not None)
    if not xs: return None
    h = len(xs) // 2
    return xs[h] if len(xs) % 2 else 0.5 * (xs[h - 1] + xs[h])

# A system's runs of a case, one per round: its record is the round with the median time (the
# lower of the two middle ones for an even count), with the fields only round 1 has (the
# cache model's) added from it.
for key, rs in list(runs.items()):
    by_round = {int(r.get("round", 1)): r for r in rs}
    timed = sorted((r for r in rs if isinstance(r.get("median_s"), (int, float))), key=lambda r: r["median_s"])
    rep = dict(timed[(len(timed) - 1) // 2] if timed else rs[0])
    for r in rs:
        for f, v in r.items(): rep.setdefault(f, v)
    rep["round_medians_s"] = [by_round[i].get("median_s") for i in sorted(by_round)]
    runs[key] = rep
    runs[key + ("rounds",)] = by_round

def get(case, label, t, key="median_s"):
    r = runs.get(case + (label, t))
    v = r.get(key) if r else None
    return v if isinstance(v, (int, float)) and v >= 0 else None

def round_ratio(num, den, key="median_s"):
    """The median over the rounds that have both runs of num's key / den's key."""
    a, b = runs.get(num + ("rounds",), {}), runs.get(den + ("rounds",), {})
    xs = []
    for i in a:
        x, y = a[i].get(key), b.get(i, {}).get(key)
        if isinstance(x, (int, float)) and isinstance(y, (int, float)) and x > 0 and y > 0: xs.append(x / y)
    return med(xs)

def fms(v, w=8):
    if v is None: return "-".rjust(w)
    v *= 1000
    return ("%.0f" % v if v >= 1000 else "%.1f" % v if v >= 10 else "%.3f" % v).rjust(w)

def fr(v, w=6):
    return "-".rjust(w) if v is None else ("%.2f" % v).rjust(w)

def gm(xs):
    xs = [x for x in xs if x is not None and x > 0]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else None

def stream_gbps(t):
    v = stream.get("gbps_%dt" % t)
    return v if isinstance(v, (int, float)) and v > 0 else None

letters = {"scipy": "s", "grb-new": "n", "grb-accum": "a"}
def best_anchor(case, t):
    cands = [("scipy", get(case, "scipy", 1)), ("grb-new", get(case, "grb-new", t)),
             ("grb-accum", get(case, "grb-accum", t))]
    cands = [c for c in cands if c[1] is not None]
    return min(cands, key=lambda c: c[1]) if cands else (None, None)

def ratio(case, t, label="dsmm"):
    """dsmm / the best anchor at t: the median over the rounds of the two runs' ratio."""
    an, at = best_anchor(case, t)
    if an is None: return None, an, at
    return round_ratio(case + (label, t), case + (an, 1 if an == "scipy" else t)), an, at

def pct(case, t, label="dsmm"):
    g, s = get(case, label, t, "gbps"), stream_gbps(t)
    return 100.0 * g / s if g and s else None

# The cache model (docs/bench.md, "Where the time goes when B is in the cache"): the time the
# row-wise product's traffic takes at measured rates. A and C move once at STREAM's rate; the
# lines of B that the L2 model (bench/spmm_model.h) says each thread's L2 misses come at the
# rate of random gathers of B's rows from all of B; the rest of B's row reads (L2 hits) at
# the rate of random gathers from a part of B that the L2 holds; never below the compulsory
# floor. %CM = model / measured time: near 100 the counted traffic explains the time, above
# 100 the kernel beats the model (rows reused from L1, neighbouring rows read together).
def cache_model_s(case, t):
    r = runs.get(case + ("dsmm", t))
    s = stream_gbps(t)
    if not r or not s: return None
    miss, g, g2 = r.get("b_line_misses"), r.get("gather_gbps"), r.get("gather_l2_gbps")
    by, bb = r.get("bytes"), r.get("b_bytes")
    if not all(isinstance(x, (int, float)) for x in (miss, g, g2, by, bb)) or miss < 0 or g <= 0 or g2 <= 0:
        return None
    gathered = r["nnz"] * r["k"] * (4 if r["type"] == "float" else 8)
    hits = max(0.0, gathered - 64.0 * miss)
    return max(by / (s * 1e9), (by - bb) / (s * 1e9) + 64.0 * miss / (g * 1e9) + hits / (g2 * 1e9))

def pct_cm(case, t):
    f, d = cache_model_s(case, t), get(case, "dsmm", t)
    return 100.0 * f / d if f and d else None

def miss_pct(case, t):
    r = runs.get(case + ("dsmm", t))
    if not r or not isinstance(r.get("b_line_misses"), (int, float)) or r["b_line_misses"] < 0: return None
    gathered = r["nnz"] * r["k"] * (4 if r["type"] == "float" else 8)
    return 100.0 * 64.0 * r["b_line_misses"] / gathered if gathered else None

def cname(case):
    return "%-14s %4d %s" % (case[0][:14], case[1], case[2][0])

nr = int(meta.get("rounds", 1))
print("Times: median ms of C = A*B%s (%s); STREAM triad %s" % (
      " (the median over %d rounds of each system's median)" % nr if nr > 1 else "", meta.get("machine", ""),
      ", ".join("%dt %.1f GB/s" % (t, stream_gbps(t)) for t in ts if stream_gbps(t))))
hdr = "%-21s %8s %9s" % ("matrix            k T", "n", "nnz(A)")
for t in ts: hdr += " %8s" % ("dsmm %dt" % t)
hdr += " %8s" % ("rows %dt" % tm)
hdr += " %8s" % ("col %dt" % tm)
for t in ts: hdr += " %8s" % ("GrBn %dt" % t)
for t in ts: hdr += " %8s" % ("GrBa %dt" % t)
hdr += " %8s" % "scipy"
print(hdr); print("-" * len(hdr))
for c in cases:
    p = prep.get(c[0], {})
    line = "%-21s %8s %9s" % (cname(c), p.get("n", "-"), p.get("nnz_a", "-"))
    for t in ts: line += " " + fms(get(c, "dsmm", t))
    line += " " + fms(get(c, "rows", tm))
    line += " " + fms(get(c, "col", tm))
    for t in ts: line += " " + fms(get(c, "grb-new", t))
    for t in ts: line += " " + fms(get(c, "grb-accum", t))
    line += " " + fms(get(c, "scipy", 1))
    print(line)

print()
print("dsmm rates at %dt against the compulsory traffic, ratios (< 1: dsmm faster), agreement" % tm)
hdr = "%-21s %7s %7s %6s %5s %5s" % ("matrix            k T", "GF/s", "GB/s", "%STRM", "miss%", "%CM")
for t in ts: hdr += " %10s" % ("best %dt" % t)
for t in ts: hdr += " %6s" % ("r %dt" % t)
hdr += " %6s %6s %6s %7s %8s %s" % ("r rows", "rows/d", "%dt/%dt" % (tm, t1), "col/row", "B MB", "agree")
print(hdr); print("-" * len(hdr))
out_json = []
rk8 = {t: [] for t in ts}; rk1 = {t: [] for t in ts}; rows8 = []; rows1 = []; rows_d = []; rows_prep = []; scal = []; same_code = []; colrow = []; inllc = []; inllc_cm = []
for c in cases:
    mp, cm = miss_pct(c, tm), pct_cm(c, tm)
    line = "%-21s %7s %7s %6s %5s %5s" % (cname(c), fr(get(c, "dsmm", tm, "gflops"), 7),
                                  fr(get(c, "dsmm", tm, "gbps"), 7), fr(pct(c, tm), 6),
                                  "-" if mp is None else "%.0f" % mp, "-" if cm is None else "%.0f" % cm)
    for t in ts:
        _, an, at = ratio(c, t)
        line += " %10s" % ("-" if at is None else "%s %s" % (fms(at, 7).strip(), letters[an]))
    for t in ts:
        r, an, at = ratio(c, t)
        (rk1 if c[1] == 1 else rk8)[t].append(r)
        line += " " + fr(r)
    rr, _, _ = ratio(c, tm, "rows")
    (rows1 if c[1] == 1 else rows8).append(rr)
    rd = round_ratio(c + ("rows", tm), c + ("dsmm", tm))
    rows_d.append(rd)
    rp, rm = get(c, "rows", tm, "prepare_s"), get(c, "rows", tm)
    rows_prep.append(rp / rm if rp and rm else None)
    line += " %6s %6s" % (fr(rr), fr(rd))
    sc = round_ratio(c + ("dsmm", tm), c + ("dsmm", t1)) if tm != t1 else None
    scal.append(sc)
    # dsmm runs a product too small to share (dsmmi_spmm_threads) on one thread at any count:
    # then both times are of the same code and their ratio is the machine's noise.
    same_code.append(sc is not None and get(c, "dsmm", tm, "threads") == 1)
    # The paired rounds' ratio where the col run has one (--pair), else the two runs' ratio;
    # the median over the benchmark's rounds.
    crr = runs.get(c + ("col", tm, "rounds"), {})
    cr = med([x.get("pair_ratio") for x in crr.values() if isinstance(x.get("pair_ratio"), (int, float))]) \
        or round_ratio(c + ("col", tm), c + ("dsmm", tm))
    colrow.append(cr)
    bb = get(c, "dsmm", tm, "b_bytes")
    fits = bb is not None and llc > 0 and bb <= llc
    if fits:
        inllc.append(pct(c, tm))
        inllc_cm.append(cm)
    line += " %6s %7s %8s" % (fr(sc), fr(cr, 7), "-" if bb is None else "%.1f%s" % (bb / 2**20, "*" if fits else " "))
    st = status.get(c, [])
    bad = [s for s in st if s["status"] in ("disagree", "failed")]
    nagree = sum(1 for s in st if s["status"] == "agree")
    line += " " + ("NO: " + ",".join("%s%s" % (s["label"], s["threads"]) for s in bad) if bad
                   else "yes(%d)" % nagree if nagree else "-")
    print(line)
    for t in ts:
        for label in ("dsmm", "rows", "col"):
            dr = runs.get(c + (label, t))
            if not dr: continue
            r, an, at = ratio(c, t, label)
            out_json.append(dict(dr, best_anchor=an, best_anchor_s=at, ratio=r,
                                 stream_gbps=stream_gbps(t), pct_stream=pct(c, t, label),
                                 pct_cache_model=(pct_cm(c, t) if label == "dsmm" else None),
                                 b_in_llc=int(fits), ratio_vs_1t=(sc if label == "dsmm" and t == tm else None),
                                 ratio_col_row=(cr if label == "col" else None)))
print("-" * len(hdr))

def summary(xs, limit=None):
    v = [x for x in xs if x is not None]
    if not v: return "-"
    s = "%.2f (max %.2f, %d cases" % (gm(v), max(v), len(v))
    if limit is not None: s += ", %d above %.1f" % (sum(1 for x in v if x > limit), limit)
    return s + ")"
for t in ts:
    print("geomean dsmm %dt / best anchor, k >= 8: %s;  k = 1: %s" % (t, summary(rk8[t], 0.9), summary(rk1[t], 0.8)))
if tm != t1:
    v = [x for x in scal if x is not None]
    slow1 = sum(1 for x, same in zip(scal, same_code) if x is not None and x > 1.0 and same)
    print("dsmm %dt / %dt: geomean %s, slower at %dt in %d of %d cases (%d of them ran on one thread "
          "at both counts, too small to share: the same code, so noise)" % (
        tm, t1, fr(gm(v), 0).strip(), tm, sum(1 for x in v if x > 1.0), len(v), slow1))
print("dsmm rows %dt / best anchor (A's rows stored by length, prepared untimed), k >= 8: %s;  k = 1: %s" % (
    tm, summary(rows8, 0.9), summary(rows1, 0.8)))
print("dsmm rows / dsmm at %dt (the same kernel on the stored rows, same bits): %s; preparing the rows took "
      "the time of %s products (geomean; max %s)" % (tm, summary(rows_d), fr(gm(rows_prep), 0).strip(),
      fr(max([x for x in rows_prep if x is not None], default=None), 0).strip()))
print("column-wise / row-wise at %dt: %s" % (tm, summary(colrow, 1.3)))
v = [x for x in inllc if x is not None]
if llc <= 0:
    print("B in the last-level cache: - (cache size unknown; --llc SIZE)")
else:
    print("B in the last-level cache (%d MiB): %d of %d cases; their %% of STREAM at %dt: %s" % (
        llc // 2**20, len(inllc), len(cases), tm,
        "geomean %.0f%%, min %.0f%%, %d below 60%%" % (gm(v), min(v), sum(1 for x in v if x < 60)) if v else "-"))
    v = [x for x in inllc_cm if x is not None]
    print("  the same cases against the cache model (A and C at STREAM's rate, B's rows at the measured "
          "random-gather rates of L2 misses and hits as the L2 model counts them): %s" % (
        "geomean %.0f%%, min %.0f%%, max %.0f%%, %d below 60%%" % (gm(v), min(v), max(v), sum(1 for x in v if x < 60))
        if v else "- (no model: --alg ref, or bench_spmm without --l2-model)"))
print("(T: f float, d double; times in ms; best: the fastest anchor at that thread count, s = scipy 1t, n = GrB_mxm into a "
      "new C, a = GrB_mxm C += A*B into a full C; rows = dsmm's row-wise kernel on A's rows stored by length "
      "(dsmm_spmm_rows); r = dsmm / best, the median over the rounds of the ratio of the two "
      "runs of the same round (so not always the ratio of the two medians), as 2t/1t, r rows (rows / best) and "
      "rows/d (rows / dsmm); %%STRM = dsmm GB/s / STREAM triad "
      "at %dt = %% of the compulsory-traffic floor; miss%% = B's lines the L2 model misses, %% of the B rows read; "
      "%%CM = the cache model's time / dsmm's time; col/row = column-wise / row-wise, the median over "
      "rounds of the two alternated in one process (and over the benchmark's rounds); B MB * = B fits in the last-level cache; "
      "targets at %dt: geomean r (k >= 8) <= 0.5 with none above 0.9, k = 1 <= 0.8, never slower "
      "than %dt, col/row <= 1.3, >= 60%% of STREAM when B fits in the cache)" % (tm, tm, t1))
for c, ss in status.items():
    for s in ss:
        if s["status"] in ("skipped", "failed", "disagree"):
            who = "" if s["label"] == "all" else " %s %dt" % (s["label"], s["threads"])
            what = s["name"] if s["k"] == 0 else "%s k=%d %s" % (s["name"], s["k"], s["type"])
            print("%s: %s%s: %s" % (what, s["status"], who, s["detail"]))
print()
for j in out_json:
    j["bench"] = "spmm_result"
    j["machine_detail"] = meta.get("machine")
    print(json.dumps(j, separators=(",", ":")))
with open(path, "a") as f:
    for j in out_json: f.write(json.dumps(j, separators=(",", ":")) + "\n")
PY
