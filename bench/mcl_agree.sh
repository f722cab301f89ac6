#!/usr/bin/env bash
# bench/mcl_agree.sh: dsmm mcl against mcl 22-282 on every network of ../shared/data/mcl, with
# mcl's default settings (-I 2) and -I 1.4 and 4, at several rank counts: the clusterings must
# be identical (split/join distance 0, measured with `dsmm clm dist`; also byte-compared).
# Matrix Market networks are given to mcl as abc triples whose first lines register the
# vertices in index order ("k k 1": loops, which mcl discards), so labels and order match.
# proteins.mci (mcl's native format) is read by both as it is.
# On several ranks dsmm runs `--expand dist` by default (SUMMA: stage sums and pruning from the
# ranks' candidates, the path whose agreement is not automatic); `--expand auto` or
# `replicated` checks the replicated expansion instead. --tf SPEC gives both mcl's -tf SPEC
# (e.g. '#knn(20)'), so the transforms are checked on the same networks; --args "WORDS" gives
# both further options (e.g. "-overlap split", "--force-connected=y", "-c 0"). Overlapping
# clusterings (-overlap keep) have no split/join distance: they must be byte-identical.
# usage: bench/mcl_agree.sh DSMM_BINARY [OUTDIR] [--ranks "1 2 4"] [--only "NAME ..."] [--inflations "2 1.4 4"]
#                           [--expand dist|replicated|auto] [--tf SPEC] [--args "WORDS"]
set -u
dsmm=$1
shift
out=${1:-/tmp/dsmm-mcl-agree}
[ $# -gt 0 ] && shift
ranks="1 2 4"
only=""
infl="2 1.4 4"
expand=dist
tf=()
while [ $# -gt 0 ]; do
    case "$1" in
    --ranks) ranks=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --inflations) infl=$2; shift 2 ;;
    --expand) expand=$2; shift 2 ;;
    --tf) tf=(-tf "$2"); shift 2 ;;
    --args) read -r -a extra <<<"$2"; tf+=("${extra[@]}"); shift 2 ;;
    *) echo "mcl_agree: unknown option $1" >&2; exit 2 ;;
    esac
done
data=$(cd "$(dirname "$0")/.." && pwd)/../shared/data/mcl
if ! command -v mcl >/dev/null 2>&1; then
    echo "mcl_agree: SKIP: mcl is not installed (apt-get install mcl)"
    exit 0
fi
if [ ! -d "$data" ]; then
    echo "mcl_agree: SKIP: $data is absent"
    exit 0
fi
mkdir -p "$out"
. "$(dirname "$0")/../scripts/mpi.sh"
mpi_launcher # the launch command, with Open MPI's flags only under Open MPI
nets="collins2007.txt gavin2006_socioaffinities_rescaled.txt krogan2006_core.txt krogan2006_extended.txt TAP_core.txt hart_scores.txt pe_combined.txt STRING_PPI.edgelist hep-th.mtx proteins.mci"
printf "%-40s %5s %8s %6s" network I clusters mcl_s
for p in $ranks; do printf " %14s" "P=$p d/ident/s"; done
printf "\n"
fails=0
for net in $nets; do
    [ -n "$only" ] && [[ " $only " != *" $net "* ]] && continue
    src=$data/$net.gz
    [ -f "$src" ] || { echo "$net: absent, skipped"; continue; }
    name=$out/$net
    if [[ $net == *.mci ]]; then
        # mcl's native format, read by both as it is; the clusters come back in that format,
        # whose line breaks differ between the two writers: "ident" compares without mcl's
        # "# cline" line, the distance decides.
        zcat "$src" >"$name.abc"
        dsmm_in=("$name.abc")
    elif [[ $net == *.mtx ]]; then
        # mcl input: abc with vertices registered 1..n first; dsmm reads the .mtx itself.
        zcat "$src" | awk 'BEGIN{h=0} /^%/{next} h==0{n=$1; for(k=1;k<=n;k++) print k"\t"k"\t1"; h=1; next} {w=(NF>=3)?$3:1; print $1"\t"$2"\t"w}' >"$name.abc"
        dsmm_in=("$src")
    else
        zcat "$src" >"$name.abc"
        dsmm_in=("$name.abc" --abc)
    fi
    for I in $infl; do
        t0=$(date +%s.%N)
        if [[ $net == *.mci ]]; then
            mcl "$name.abc" "${tf[@]}" -I "$I" -o - 2>/dev/null | grep -v '^# cline' >"$name.mcl.I$I"
        else
            mcl "$name.abc" --abc "${tf[@]}" -I "$I" -o "$name.mcl.I$I" 2>/dev/null
        fi
        t1=$(date +%s.%N)
        ncl=$(wc -l <"$name.mcl.I$I")
        [[ $net == *.mci ]] && ncl=$(grep -c '[$]$' "$name.mcl.I$I") # one "$" ends each cluster
        printf "%-40s %5s %8s %6.1f" "$net" "$I" "$ncl" "$(awk -v a="$t1" -v b="$t0" 'BEGIN { print a - b }')"
        for p in $ranks; do
            t0=$(date +%s.%N)
            ex=()
            [ "$p" -gt 1 ] && ex=(--expand "$expand")
            "${mpi[@]}" -n "$p" "$dsmm" mcl "${dsmm_in[@]}" "${ex[@]}" "${tf[@]}" -I "$I" -o "$name.dsmm.P$p.I$I" -q -V \
                >/dev/null 2>"$name.dsmm.P$p.I$I.err"
            rc=$?
            t1=$(date +%s.%N)
            if [ $rc -ne 0 ]; then
                printf " %14s" "FAIL(rc=$rc)"
                fails=$((fails + 1))
                continue
            fi
            d=$("$dsmm" clm dist "$name.mcl.I$I" "$name.dsmm.P$p.I$I" 2>/dev/null | sed -n 's/^d=\([0-9]*\).*/\1/p')
            same=no
            cmp -s "$name.mcl.I$I" "$name.dsmm.P$p.I$I" && same=yes
            # No distance (overlapping clusters): identical bytes decide.
            [ -z "$d" ] && [ "$same" = yes ] && d=-
            [ "$d" = 0 ] || [ "$d" = - ] || fails=$((fails + 1))
            printf " %14s" "$d/$same/$(printf %.1f "$(awk -v a="$t1" -v b="$t0" 'BEGIN { print a - b }')")"
        done
        printf "\n"
    done
done
echo "networks with a non-zero split/join distance or a failed run: $fails"
[ $fails -eq 0 ]
