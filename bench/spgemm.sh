#!/usr/bin/env bash
# bench/spgemm.sh: local SpGEMM C = A * A, dsmm vs scipy, SuiteSparse:GraphBLAS and PETSc, in
# one run on this machine (docs/bench.md). Each system runs in its own process per matrix (so
# peak RSS means that product) on the same raw CSR export, and the runner checks that all
# results agree (nnz(C) exactly, y = C x within a relative 1e-9) before printing the table.
#
# Usage: bash bench/spgemm.sh BUILD_DIR [--threads "1 2"] [--repeat 5] [--min-time 0.2]
#                             [--quick] [--only NAME...] [--kernel auto] [--max-flops 2e9]
#                             [--systems "dsmm scipy graphblas petsc"] [--out DIR] [--list]
# BUILD_DIR holds bench/bench_spgemm (and bench/spgemm_graphblas, bench/spgemm_petsc when
# those libraries were found); use a Release build. Inputs come from ../shared/data next to
# the repository, or $DSMM_SHARED_DATA. Output: the table on stdout, everything also in
# DIR/spgemm-DATE.log and one JSON line per run in DIR/spgemm-DATE.jsonl (DIR defaults to
# BUILD_DIR/bench-results, ignored by git). Each timed loop runs at least --repeat times and as
# many more as fill --min-time seconds at its warm-up's pace (bench_repeats, bench_common.h).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
here=$repo/bench

usage() { sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 1 ] || usage
build=$1
shift
threads="1 2"
repeat=5
min_time=0.2
quick=0
kernel=auto
max_flops=2e9
systems="dsmm scipy graphblas petsc"
out=""
list=0
only=()
while [ $# -gt 0 ]; do
  case "$1" in
    --threads) threads=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --min-time) min_time=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    --kernel) kernel=$2; shift 2 ;;
    --max-flops) max_flops=$2; shift 2 ;;
    --systems) systems=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --list) list=1; shift ;;
    --only) shift; while [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; do only+=("$1"); shift; done ;;
    -h|--help) usage ;;
    *) echo "spgemm.sh: unknown option '$1'" >&2; usage ;;
  esac
done
[[ "$min_time" =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "spgemm.sh: --min-time '$min_time': seconds >= 0" >&2; exit 2; }
data=${DSMM_SHARED_DATA:-$repo/../shared/data}

# name | path under $data (or rmatd:SCALE) | sym = symmetrise (pairs listed once) | quick set
inputs=(
  "hep-th|mcl/hep-th.mtx.gz|-|q"
  "collins2007|mcl/collins2007.txt.gz|sym|q"
  "gavin2006|mcl/gavin2006_socioaffinities_rescaled.txt.gz|sym|-"
  "krogan-core|mcl/krogan2006_core.txt.gz|sym|-"
  "krogan-ext|mcl/krogan2006_extended.txt.gz|sym|-"
  "hart|mcl/hart_scores.txt.gz|sym|-"
  "pe-combined|mcl/pe_combined.txt.gz|sym|-"
  "string-ppi|mcl/STRING_PPI.edgelist.gz|sym|-"
  "facebook|graphs/facebook-combined.mtx.gz|-|-"
  "as-caida|graphs/as-caida20071105.mtx.gz|-|-"
  "ca-condmat|graphs/ca-condmat-cc1.mtx.gz|-|q"
  "ca-astroph|graphs/ca-astroph-cc1.mtx.gz|-|-"
  "email-enron|graphs/email-enron.mtx.gz|-|-"
  "cit-hepth|graphs/cit-HepTh.mtx.gz|-|-"
  "cit-hepph|graphs/cit-HepPh.mtx.gz|-|-"
  "ego-twitter|graphs/ego-twitter-undirected.mtx.gz|-|-"
  "p2p-gnutella08|graphs/p2p-Gnutella08.edgelist.gz|-|q"
  "bcsstk13|matrices/bcsstk13.mtx.gz|-|q"
  "fe_4elt2|matrices/fe_4elt2.mtx.gz|-|q"
  "cage10|matrices/cage10.mtx.gz|-|-"
  "cage11|matrices/cage11.mtx.gz|-|-"
  "EX5|matrices/EX5.mtx.gz|-|-"
  "delaunay_n16|matrices/delaunay_n16.mtx.gz|-|-"
  "ct2010|matrices/ct2010.mtx.gz|-|-"
  "rmat14|rmatd:14|-|-"
  "rmat16|rmatd:16|-|-"
  "rmat18|rmatd:18|-|-"
)
if [ $list -eq 1 ]; then
  for e in "${inputs[@]}"; do IFS='|' read -r n p s q <<<"$e"; echo "$n $p $s${q/#-/}"; done
  exit 0
fi

# The inputs this run takes.
sel=()
for e in "${inputs[@]}"; do
  IFS='|' read -r name _ _ inquick <<<"$e"
  if [ ${#only[@]} -gt 0 ]; then
    for o in "${only[@]}"; do [ "$o" = "$name" ] && sel+=("$e"); done
  elif [ $quick -eq 0 ] || [ "$inquick" = "q" ]; then
    sel+=("$e")
  fi
done
if [ ${#sel[@]} -eq 0 ]; then
  echo "spgemm.sh: no input selected; names: $(bash "$0" "$build" --list | cut -d' ' -f1 | tr '\n' ' ')" >&2
  exit 2
fi

bench=$build/bench/bench_spgemm
[ -x "$bench" ] || { echo "spgemm.sh: $bench not built (cmake --build $build --target bench_spgemm)" >&2; exit 1; }
have() { case " $systems " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
notes=()
gb=$build/bench/spgemm_graphblas
petsc=$build/bench/spgemm_petsc
scipy_py=${SCIPY_PYTHON:-/usr/bin/python3}
if have graphblas && [ ! -x "$gb" ]; then
  notes+=("GraphBLAS: skipped ($gb not built: libgraphblas-dev missing at configure time)")
  systems=${systems/graphblas/}
fi
if have petsc && [ ! -x "$petsc" ]; then
  notes+=("PETSc: skipped ($petsc not built: libpetsc-real-dev missing at configure time)")
  systems=${systems/petsc/}
fi
if have scipy && ! "$scipy_py" -c 'import scipy.sparse' 2>/dev/null; then
  notes+=("scipy: skipped ($scipy_py cannot import scipy.sparse; apt-get install python3-scipy or set SCIPY_PYTHON)")
  systems=${systems/scipy/}
fi
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
py=${PYTHON:-python3}
command -v "$py" >/dev/null 2>&1 || py=/usr/bin/python3

out=${out:-$build/bench-results}
mkdir -p "$out"
stamp=$(date +%Y%m%d-%H%M%S)
log=$out/spgemm-$stamp.log
jsonl=$out/spgemm-$stamp.jsonl
work=$(mktemp -d "$out/work.XXXXXX")
trap 'rm -rf "$work"' EXIT
: >"$jsonl"
exec > >(tee -a "$log") 2>&1

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -1)
machine="$(hostname), ${cpu:-unknown cpu}, $(nproc) cpus, $(awk '/MemTotal/ {printf "%.0f GB", $2/1048576}' /proc/meminfo)"
build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[^=]*=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
echo "bench/spgemm: C = A*A  machine: $machine  build: ${build_type:-?} ($build)"
echo "  systems: $systems  threads: $threads  repeats: $repeat (+1 warm-up), at least ${min_time} s of runs  kernel: $kernel"
echo "  data: $data  log: $log"
for n in "${notes[@]}"; do echo "  note: $n"; done
[ "${build_type:-}" = "Release" ] || echo "  note: not a Release build: dsmm timings are not meaningful"
load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo 0)
if awk -v l="$load" 'BEGIN { exit !(l > 0.5) }'; then
  echo "  note: load average $load before starting: other processes share the cores, timings will be noisy"
fi

# meta line for the table maker
printf '{"bench":"spgemm_meta","machine":"%s","build":"%s","threads":"%s","repeat":%d,"kernel":"%s","load":%s}\n' \
  "${machine//\"/}" "${build_type:-?}" "$threads" "$repeat" "$kernel" "$load" >>"$jsonl"

field() { sed -n "s/.*\"$1\":\"\{0,1\}\([^,\"}]*\).*/\1/p" <<<"$2"; }
note_json() { # name system threads status detail
  printf '{"bench":"spgemm_status","name":"%s","system":"%s","threads":%s,"status":"%s","detail":"%s"}\n' \
    "$1" "$2" "$3" "$4" "${5//\"/\'}" >>"$jsonl"
}
# run_one NAME SYSTEM THREADS CMD...: runs CMD, appends its JSON line, notes failures.
run_one() {
  local name=$1 sys=$2 t=$3
  shift 3
  local line rc=0
  line=$(timeout "${DSMM_BENCH_TIMEOUT:-3600}" env OMP_NUM_THREADS="$t" "$@" 2>"$work/err") || rc=$?
  if [ $rc -ne 0 ] || [ -z "$line" ]; then
    local why
    why=$(tail -n 3 "$work/err" | tr '\n' ' ' | cut -c1-300)
    [ $rc -eq 124 ] && why="timed out after ${DSMM_BENCH_TIMEOUT:-3600} s"
    echo "  $sys ${t}t: FAILED (exit $rc): $why"
    note_json "$name" "$sys" "$t" failed "exit $rc: $why"
    return 1
  fi
  # Key the record by the thread count asked for: a small product runs on fewer threads
  # (min_thread_flops) and says so in "threads", which must not overwrite the 1t record.
  line="${line%\}},\"threads_requested\":$t}"
  echo "$line" >>"$jsonl"
  local med num
  med=$(field median_s "$line")
  num=$(field numeric_median_s "$line")
  [ -z "$num" ] && num=$(field reuse_median_s "$line")
  printf '  %-9s %st: %10.4f s%s  peak RSS %s MB\n' "$sys" "$t" "$med" \
    "${num:+  (numeric $(printf '%.4f' "$num") s)}" "$(( $(field peak_rss_kb "$line") / 1024 ))"
}

mem_kb=$(awk '/MemAvailable/ {print $2}' /proc/meminfo)
for e in "${sel[@]}"; do
  IFS='|' read -r name path sym _ <<<"$e"
  case "$path" in
    rmat*:*) src=$path ;;
    *) src=$data/$path
       if [ ! -f "$src" ]; then
         echo "$name: skipped: $src not found"
         note_json "$name" all 0 skipped "$src not found"
         continue
       fi ;;
  esac
  csr=$work/$name.csr
  symflag=()
  [ "$sym" = "sym" ] && symflag=(--symmetrize)
  if ! prep=$("$bench" "$src" "${symflag[@]}" --export "$csr" --no-run --name "$name" 2>"$work/err"); then
    echo "$name: skipped: preparing failed: $(tail -n 2 "$work/err" | tr '\n' ' ')"
    note_json "$name" all 0 failed "prepare: $(tail -n 1 "$work/err")"
    continue
  fi
  echo "$prep" >>"$jsonl"
  flops=$(field flops "$prep")
  est=$(field nnz_c_est "$prep")
  printf '%s: n %s, nnz(A) %s, flops %.3g, nnz(C) ~%.3g%s\n' "$name" "$(field n "$prep")" \
    "$(field nnz_a "$prep")" "$flops" "$est" "$([ "$sym" = sym ] && echo ', symmetrised')"
  # Skip products that would not fit: ~16 bytes per entry of C (value + 64-bit index, the
  # widest anchor) in 70% of the memory available now, or above --max-flops (time).
  if awk -v e="$est" -v m="$mem_kb" 'BEGIN { exit !(e * 16 > 0.7 * m * 1024) }'; then
    msg=$(awk -v e="$est" -v m="$mem_kb" 'BEGIN { printf "nnz(C) ~%.3g needs ~%.1f GB per C, %.1f GB available", e, e * 16 / 2^30, m / 2^20 }')
    echo "$name: skipped: $msg"
    note_json "$name" all 0 skipped "$msg"
    rm -f "$csr"
    continue
  fi
  if awk -v f="$flops" -v m="$max_flops" 'BEGIN { exit !(m > 0 && f > m) }'; then
    echo "$name: skipped: flops $flops > --max-flops $max_flops"
    note_json "$name" all 0 skipped "flops $flops > --max-flops $max_flops"
    rm -f "$csr"
    continue
  fi
  reps=$repeat
  if awk -v f="$flops" 'BEGIN { exit !(f > 1e9) }' && [ "$reps" -gt 3 ]; then
    reps=3 # huge products: 3 timed repeats
    echo "  (flops > 1e9: $reps repeats)"
  fi
  checks=()
  if have dsmm; then
    for t in $threads; do
      if run_one "$name" dsmm "$t" "$bench" "$csr" --threads "$t" --kernel "$kernel" \
          --repeat "$reps" --min-time "$min_time" --check "$work/$name.dsmm.$t.chk" --name "$name"; then
        checks+=("dsmm:$t:$work/$name.dsmm.$t.chk")
      fi
    done
  fi
  if have scipy; then
    if run_one "$name" scipy 1 "$scipy_py" "$here/spgemm_scipy.py" "$csr" --repeat "$reps" \
        --min-time "$min_time" --check "$work/$name.scipy.chk" --name "$name"; then
      checks+=("scipy:1:$work/$name.scipy.chk")
    fi
  fi
  if have graphblas; then
    for t in $threads; do
      if run_one "$name" graphblas "$t" "$gb" "$csr" --threads "$t" --repeat "$reps" \
          --min-time "$min_time" --check "$work/$name.gb.$t.chk" --name "$name"; then
        checks+=("graphblas:$t:$work/$name.gb.$t.chk")
      fi
    done
  fi
  if have petsc; then
    if run_one "$name" petsc 1 "$petsc" "$csr" --repeat "$reps" --min-time "$min_time" \
        --check "$work/$name.petsc.chk" --name "$name"; then
      checks+=("petsc:1:$work/$name.petsc.chk")
    fi
  fi
  # Agreement: every check file against the first one.
  if [ ${#checks[@]} -ge 1 ]; then
    IFS=: read -r rsys rt rfile <<<"${checks[0]}"
    for c in "${checks[@]:1}"; do
      IFS=: read -r csys ct cfile <<<"$c"
      if res=$("$bench" --compare "$rfile" "$cfile" --rtol 1e-9); then
        note_json "$name" "$csys" "$ct" agree "vs $rsys ${rt}t: $res"
      else
        echo "  DISAGREE: $csys ${ct}t vs $rsys ${rt}t: $res"
        note_json "$name" "$csys" "$ct" disagree "vs $rsys ${rt}t: $res"
      fi
    done
    [ ${#checks[@]} -ge 2 ] && echo "  agreement checked: ${#checks[@]} results"
  fi
  rm -f "$csr" "$work/$name".*.chk
done

echo
"$py" - "$jsonl" <<'PY'
import json, math, sys

path = sys.argv[1]
recs = [json.loads(l) for l in open(path) if l.strip()]
meta = next((r for r in recs if r.get("bench") == "spgemm_meta"), {})
threads = [int(t) for t in str(meta.get("threads", "1 2")).split()]
names, prep, runs, status = [], {}, {}, {}
for r in recs:
    b = r.get("bench")
    if b == "spgemm_prepare":
        names.append(r["name"]); prep[r["name"]] = r
    elif b == "spgemm":
        runs[(r["name"], r["system"], int(r.get("threads_requested", r["threads"])))] = r
    elif b == "spgemm_status":
        status.setdefault(r["name"], []).append(r)

def get(name, sys_, t, key):
    r = runs.get((name, sys_, t))
    v = r.get(key) if r else None
    return v if isinstance(v, (int, float)) and v >= 0 else None

def fs(v, w=8):
    if v is None: return "-".rjust(w)
    if v >= 100: return ("%.0f" % v).rjust(w)
    if v >= 1: return ("%.2f" % v).rjust(w)
    return ("%.4f" % v).rjust(w) if v >= 0.001 else ("%.2e" % v).rjust(w)

def fr(v, w=6):
    return "-".rjust(w) if v is None else ("%.2f" % v).rjust(w)

def gm(xs):
    xs = [x for x in xs if x is not None and x > 0]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else None

def best_anchor(name, t):
    cands = [("scipy", get(name, "scipy", 1, "median_s")), ("petsc", get(name, "petsc", 1, "median_s")),
             ("graphblas", get(name, "graphblas", t, "median_s"))]
    cands = [c for c in cands if c[1] is not None]
    return min(cands, key=lambda c: c[1]) if cands else (None, None)

done = [n for n in names if any(k[0] == n for k in runs)]
ts = threads
print("Times: median seconds of C = A*A (full product unless marked numeric); %s" % meta.get("machine", ""))
hdr = "%-14s %8s %9s %9s %10s %6s" % ("matrix", "n", "nnz(A)", "flops", "nnz(C)", "cf")
for t in ts: hdr += " %8s" % ("dsmm %dt" % t)
hdr += " %8s" % "scipy"
for t in ts: hdr += " %8s" % ("GrB %dt" % t)
hdr += " %8s %8s" % ("PETSc", "P.reuse")
for t in ts: hdr += " %8s" % ("num %dt" % t)
print(hdr); print("-" * len(hdr))
for n in done:
    p = prep[n]
    nnzc = next((r["nnz_c"] for k, r in runs.items() if k[0] == n), None)
    cf = p["flops"] / nnzc if nnzc else None
    line = "%-14s %8d %9d %9.3g %10s %6s" % (n[:14], p["n"], p["nnz_a"], p["flops"],
                                             nnzc if nnzc is not None else "-", fr(cf))
    for t in ts: line += " " + fs(get(n, "dsmm", t, "median_s"))
    line += " " + fs(get(n, "scipy", 1, "median_s"))
    for t in ts: line += " " + fs(get(n, "graphblas", t, "median_s"))
    line += " " + fs(get(n, "petsc", 1, "median_s")) + " " + fs(get(n, "petsc", 1, "reuse_median_s"))
    for t in ts: line += " " + fs(get(n, "dsmm", t, "numeric_median_s"))
    print(line)

print()
print("Ratios (< 1: dsmm faster), dsmm rate, kernel row mix and peak RSS (MB)")
hdr = "%-14s" % "matrix"
for t in ts: hdr += " %7s" % ("Gma/s%d" % t)
for t in ts: hdr += " %11s" % ("best %dt" % t)
for t in ts: hdr += " %7s" % ("num/P%d" % t)
hdr += " %15s" % "rows h/p/d"
for t in ts: hdr += " %6s" % ("dsmm%d" % t)
hdr += " %6s" % "scipy"
for t in ts: hdr += " %6s" % ("GrB%d" % t)
hdr += " %6s %6s %s" % ("PETSc", "mem", "agree")
print(hdr); print("-" * len(hdr))
ratio = {t: [] for t in ts}; nratio = {t: [] for t in ts}; mratio = []
out_json = []
short = {"scipy": "s", "petsc": "p", "graphblas": "g"}
for n in done:
    line = "%-14s" % n[:14]
    for t in ts:
        m = get(n, "dsmm", t, "madds_per_s")
        line += " " + fr(m / 1e9 if m else None, 7)
    for t in ts:
        d = get(n, "dsmm", t, "median_s"); an, at = best_anchor(n, t)
        r = d / at if d and at else None
        ratio[t].append(r)
        line += " %11s" % ("-" if r is None else "%.3f(%s)" % (r, short[an]))
        dr = runs.get((n, "dsmm", t))
        if dr:
            out_json.append(dict(dr, best_anchor=an, best_anchor_s=at, ratio=r,
                                 ratio_numeric_vs_petsc_reuse=None))
    for t in ts:
        d = get(n, "dsmm", t, "numeric_median_s"); pr = get(n, "petsc", 1, "reuse_median_s")
        r = d / pr if d and pr else None
        nratio[t].append(r)
        line += " " + fr(r, 7)
        for j in out_json:
            if j["name"] == n and j.get("threads_requested", j["threads"]) == t: j["ratio_numeric_vs_petsc_reuse"] = r
    dr = runs.get((n, "dsmm", ts[-1]))
    mix = "%d/%d/%d" % (dr["rows_hash"], dr["rows_heap"], dr["rows_dense"]) if dr else "-"
    line += " %15s" % mix[:15]
    rss = lambda s, t: (get(n, s, t, "peak_rss_full_kb") or get(n, s, t, "peak_rss_kb"))
    for t in ts: line += " " + fs((rss("dsmm", t) or 0) / 1024 or None, 6)
    line += " " + fs((rss("scipy", 1) or 0) / 1024 or None, 6)
    for t in ts: line += " " + fs((rss("graphblas", t) or 0) / 1024 or None, 6)
    line += " " + fs((rss("petsc", 1) or 0) / 1024 or None, 6)
    anchors = [rss("scipy", 1), rss("petsc", 1)] + [rss("graphblas", t) for t in ts]
    anchors = [a for a in anchors if a]
    dm = rss("dsmm", ts[-1])
    mr = dm / min(anchors) if dm and anchors else None
    mratio.append(mr)
    line += " " + fr(mr, 6)
    st = status.get(n, [])
    bad = [s for s in st if s["status"] in ("disagree", "failed")]
    nagree = sum(1 for s in st if s["status"] == "agree")
    line += " " + ("NO: " + ",".join("%s%s" % (s["system"], s["threads"]) for s in bad) if bad
                   else "yes(%d)" % nagree if nagree else "-")
    print(line)
print("-" * len(hdr))
for t in ts:
    g = gm(ratio[t]); mx = max([r for r in ratio[t] if r], default=None)
    gn = gm(nratio[t])
    print("geomean %dt: dsmm / best anchor %s (max %s, %d matrices); dsmm numeric / PETSc reuse %s"
          % (t, fr(g, 0).strip(), fr(mx, 0).strip(), len([r for r in ratio[t] if r]), fr(gn, 0).strip()))
print("geomean peak RSS dsmm %dt / lowest anchor: %s" % (ts[-1], fr(gm(mratio), 0).strip()))
print("(best anchor: s = scipy 1t, p = PETSc 1t, g = GraphBLAS at the same thread count; "
      "num/P = dsmm numeric phase / PETSc MAT_REUSE_MATRIX; mem = peak RSS dsmm %dt / lowest anchor; "
      "rows h/p/d = dsmm rows per accumulator at %dt)" % (ts[-1], ts[-1]))
skips = [(n, s) for n, ss in status.items() for s in ss if s["status"] in ("skipped", "failed", "disagree")]
for n, s in skips:
    who = "" if s["system"] == "all" else " %s %dt" % (s["system"], s["threads"])
    print("%s: %s%s: %s" % (n, s["status"], who, s["detail"]))
print()
for j in out_json:
    j["bench"] = "spgemm_result"
    j["machine_detail"] = meta.get("machine")
    print(json.dumps(j, separators=(",", ":")))
with open(path, "a") as f:
    for j in out_json: f.write(json.dumps(j, separators=(",", ":")) + "\n")
PY
