#!/usr/bin/env bash
# bench/mcl.sh: dsmm mcl against mcl 22-282 in the same run on the same machine, the same abc
# file for both: STRING_PPI, pe_combined, hart_scores (../shared/data/mcl), ca-condmat
# (../shared/data/graphs, converted to abc once) and an R-MAT scale 14, edge factor 8 graph
# (dsmm gen, converted to abc). Each program runs REPEAT times with THREADS threads
# (mcl -te, dsmm -te); reported: median wall seconds, peak RSS (GNU time), the ratio
# mcl / dsmm, the cluster count and whether the clusterings are identical (split/join
# distance from dsmm clm dist). Then one network at 4 ranks (1x4 grid, 4 stages): the
# unphased distributed run and a run under --per-process-mem = resident + 1/4 of the
# estimated unpruned product (the expansion's share), clusters compared; and SUMMA's k-way
# versus binary merge on the same run (largest merge peak bytes and merge seconds).
# usage: bench/mcl.sh DSMM_BINARY [--repeat N] [--threads T] [--only NAME] [--out DIR] [--no-phases]
set -u
dsmm=$1
shift
repeat=3
threads=2
only=""
out=/tmp/dsmm-bench-mcl
phases=1
while [ $# -gt 0 ]; do
    case "$1" in
    --repeat) repeat=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --no-phases) phases=0; shift ;;
    *) echo "bench/mcl.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
here=$(cd "$(dirname "$0")/.." && pwd)
shared=$here/../shared/data
if ! command -v mcl >/dev/null 2>&1; then
    echo "bench/mcl.sh: SKIP: mcl is not installed (apt-get install mcl)"
    exit 0
fi
mkdir -p "$out"
. "$here/scripts/mpi.sh"

# Inputs (abc), made once.
inputs=()
add() { [ -s "$2" ] && inputs+=("$1:$2"); }
for n in STRING_PPI.edgelist pe_combined.txt hart_scores.txt; do
    if [ -f "$shared/mcl/$n.gz" ]; then
        [ -s "$out/$n.abc" ] || zcat "$shared/mcl/$n.gz" >"$out/$n.abc"
        add "$n" "$out/$n.abc"
    else
        echo "absent: $shared/mcl/$n.gz (skipped)"
    fi
done
if [ -f "$shared/graphs/ca-condmat-cc1.mtx.gz" ]; then
    [ -s "$out/ca-condmat.abc" ] || "$dsmm" convert "$shared/graphs/ca-condmat-cc1.mtx.gz" "$out/ca-condmat.abc" >/dev/null
    add ca-condmat "$out/ca-condmat.abc"
else
    echo "absent: $shared/graphs/ca-condmat-cc1.mtx.gz (skipped)"
fi
[ -s "$out/rmat14.abc" ] || { "$dsmm" gen rmat --scale 14 --edge-factor 8 --seed 1 -o "$out/rmat14.mtx" >/dev/null &&
    "$dsmm" convert "$out/rmat14.mtx" "$out/rmat14.abc" >/dev/null; }
add rmat14 "$out/rmat14.abc"

# run_timed LOG CMD...: wall seconds and peak RSS (KB) of CMD on stdout as "secs kb".
run_timed() {
    local log=$1
    shift
    /usr/bin/time -f "%e %M" -o "$log.time" "$@" >/dev/null 2>"$log"
    local rc=$?
    [ $rc -eq 0 ] || { echo "FAIL rc=$rc"; return; }
    cat "$log.time"
}
median() { sort -n | awk '{a[NR]=$1} END{print (NR%2)? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
div() { awk -v a="$1" -v b="$2" 'BEGIN { print (b == 0) ? "nan" : a / b }'; }

printf "%-22s %8s %8s %7s %9s %9s %8s %9s\n" network mcl_s dsmm_s ratio mcl_MB dsmm_MB clusters identical
for entry in "${inputs[@]}"; do
    name=${entry%%:*}
    f=${entry#*:}
    [ -n "$only" ] && [ "$only" != "$name" ] && continue
    : >"$out/$name.mcl.t"
    : >"$out/$name.dsmm.t"
    mrss=0
    drss=0
    for r in $(seq "$repeat"); do
        read -r s k <<<"$(run_timed "$out/$name.mcl.log" mcl "$f" --abc -te "$threads" -o "$out/$name.mcl.out")"
        echo "$s" >>"$out/$name.mcl.t"
        [ "${k:-0}" -gt "$mrss" ] 2>/dev/null && mrss=$k
        read -r s k <<<"$(run_timed "$out/$name.dsmm.log" "$dsmm" mcl "$f" --abc -te "$threads" -o "$out/$name.dsmm.out" -V)"
        echo "$s" >>"$out/$name.dsmm.t"
        [ "${k:-0}" -gt "$drss" ] 2>/dev/null && drss=$k
    done
    ms=$(median <"$out/$name.mcl.t")
    ds=$(median <"$out/$name.dsmm.t")
    d=$("$dsmm" clm dist "$out/$name.mcl.out" "$out/$name.dsmm.out" | sed -n 's/^d=\([0-9]*\).*/\1/p')
    printf "%-22s %8.2f %8.2f %7.2f %9.1f %9.1f %8s %9s\n" "$name" "$ms" "$ds" "$(div "$ms" "$ds")" \
        "$(div "$mrss" 1024)" "$(div "$drss" 1024)" "$(wc -l <"$out/$name.dsmm.out")" \
        "$([ "$d" = 0 ] && echo "yes(d=0)" || echo "no(d=$d)")"
done

[ $phases -eq 1 ] || exit 0
if ! "$dsmm" --version | grep -q "MPI: yes" || ! mpi_found; then
    echo "no MPI: phases and merge checks skipped"
    exit 0
fi
net=${only:-hart_scores.txt}
f=""
for entry in "${inputs[@]}"; do [ "${entry%%:*}" = "$net" ] && f=${entry#*:}; done
[ -n "$f" ] || { echo "phases check: $net absent"; exit 0; }
echo
echo "phases and merge on $net, 4 ranks on a 1x4 grid (4 SUMMA stages), 1 thread each:"
mpi_launcher OMP_NUM_THREADS=1 # Open MPI's flags only under Open MPI
mp=("${mpi[@]}" -n 4)
for acc in merge binary; do
    run_timed "$out/ph.$acc.log" "${mp[@]}" "$dsmm" mcl "$f" --abc -te 1 --grid 1x4 --accumulate "$acc" \
        -o "$out/ph.$acc.out" --stats "$out/ph.$acc.json" -V >"$out/ph.$acc.tr"
done
python3 - "$out" <<'EOF'
import json, sys
out = sys.argv[1]
k = json.load(open(out + "/ph.merge.json")); b = json.load(open(out + "/ph.binary.json"))
mk = max(i["merge_peak_bytes"] for i in k["iterations"]); mb = max(i["merge_peak_bytes"] for i in b["iterations"])
sk = sum(i["merge_seconds"] for i in k["iterations"]); sb = sum(i["merge_seconds"] for i in b["iterations"])
print("  k-way merge: largest merge peak %d bytes, merge seconds %.3f, run %.2f s" % (mk, sk, k["seconds"]))
print("  binary merge: largest merge peak %d bytes, merge seconds %.3f, run %.2f s" % (mb, sb, b["seconds"]))
print("  binary / k-way peak: %.3f" % (mb / mk if mk else float("nan")))
budget = max(i["resident_bytes"] + i["est_bytes"] / 4 for i in k["iterations"])
print("  unphased: estimated product %.0f bytes, resident %.0f bytes (largest iteration)" %
      max((i["est_bytes"], i["resident_bytes"]) for i in k["iterations"]))
open(out + "/budget", "w").write("%d\n" % int(budget))
EOF
budget=$(cat "$out/budget")
run_timed "$out/ph.budget.log" "${mp[@]}" "$dsmm" mcl "$f" --abc -te 1 --grid 1x4 --accumulate merge \
    --per-process-mem "$budget" -o "$out/ph.budget.out" --stats "$out/ph.budget.json" -V >"$out/ph.budget.tr"
d=$("$dsmm" clm dist "$out/ph.merge.out" "$out/ph.budget.out" | sed -n 's/^d=\([0-9]*\).*/\1/p')
dm=$("$dsmm" clm dist "$out/$net.mcl.out" "$out/ph.budget.out" 2>/dev/null | sed -n 's/^d=\([0-9]*\).*/\1/p')
python3 - "$out" "$budget" "$d" "${dm:-?}" <<'EOF'
import json, sys
out, budget, d, dm = sys.argv[1:5]
u = json.load(open(out + "/ph.merge.json")); p = json.load(open(out + "/ph.budget.json"))
print("  budget %s bytes per rank: phases per iteration %s" % (budget, [i["phases"] for i in p["iterations"]]))
print("  time unphased %.2f s, phased %.2f s; split/join distance phased vs unphased: %s, vs mcl: %s" %
      (u["seconds"], p["seconds"], d, dm))
EOF
