#!/usr/bin/env bash
# bench/ooc.sh: out-of-core SpGEMM (docs/ooc.md) against the in-core product, in the same run on
# the same machine: C = A * A of the largest inputs of ../shared/data (email-enron,
# ego-twitter, pe_combined and STRING_PPI of mcl/, symmetrised by the reader) and R-MAT graphs
# made by `dsmm gen` (scale 16 by default, --rmat S to add more). Modes, each REPEAT times,
# median wall seconds of the multiply (`dsmm spgemm --stats`: "seconds"), peak RSS (GNU time):
#   cpu        in core on all THREADS threads (the baseline: dsmm's own CPU kernel)
#   ooc/4      --ooc-mem = a quarter of C's bytes (so the output is 4x the budget)
#   ooc/16     --ooc-mem = a sixteenth
# With --gpu (a CUDA build on a machine with a device), also:
#   gpu        --gpu: chunks on the device, as many as the pool needs
#   gpu/4      --gpu --ooc-mem = a quarter of C's bytes (output 4x the device budget)
#   hybrid     --gpu --hybrid (ratio 0.65), and hybrid-auto (--gpu-ratio auto)
# Printed per matrix and mode: flops, nnz(C), panels, chunks (device chunks), median seconds,
# the ratio to the cpu mode (> 1: faster), the share of device kernel time hidden behind
# copies, peak RSS; every output is compared with the cpu mode's file: identical bytes, or
# the same nnz (AUTO's accumulator per row, or the device, may sum in another order; the
# values are checked by test_ooc and test_gpu).
# usage: bench/ooc.sh DSMM_BINARY [--repeat N] [--threads T] [--gpu] [--rmat S]... [--only NAME]
#                     [--out DIR]
set -u
dsmm=$1
shift
repeat=3
threads=$(nproc 2>/dev/null || echo 2)
gpu=0
rmats=(16)
only=""
out=/tmp/dsmm-bench-ooc
while [ $# -gt 0 ]; do
    case "$1" in
    --repeat) repeat=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --gpu) gpu=1; shift ;;
    --rmat) rmats+=("$2"); shift 2 ;;
    --only) only=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "bench/ooc.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
here=$(cd "$(dirname "$0")/.." && pwd)
shared=${DSMM_DATA:-$here/../shared/data}
mkdir -p "$out"
timebin=/usr/bin/time
[ -x "$timebin" ] || { echo "bench/ooc.sh: SKIP: GNU time is missing (apt-get install time)"; exit 0; }

inputs=()
names=()
add() { [ -e "$2" ] && { names+=("$1"); inputs+=("$2"); } || echo "bench/ooc.sh: $2 absent, skipped"; }
add email-enron "$shared/graphs/email-enron.mtx.gz"
add ego-twitter "$shared/graphs/ego-twitter-undirected.mtx.gz"
add pe-combined "$shared/mcl/pe_combined.txt.gz"
add string-ppi "$shared/mcl/STRING_PPI.edgelist.gz"
for s in "${rmats[@]}"; do
    f=$out/rmat$s.dsmm
    [ -e "$f" ] || "$dsmm" gen rmat -o "$f" --scale "$s" --edge-factor 16 --seed 1 -q || exit 1
    names+=("rmat$s")
    inputs+=("$f")
done

# one run: prints "seconds rss_kb" of the multiply; the stats JSON stays in $out/last.json
run1() {
    "$timebin" -f %M -o "$out/rss" "$dsmm" spgemm "$1" -q -t "$threads" --stats "$out/last.json" \
        -o "$2" "${@:3}" || return 1
    python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["seconds"], open(sys.argv[2]).read().split()[-1])' \
        "$out/last.json" "$out/rss"
}

printf '%-12s %-12s %10s %12s %9s %9s %10s %7s %7s %8s %s\n' matrix mode flops "nnz(C)" panels \
    chunks seconds cpu/x hidden "RSS MB" same
for k in "${!names[@]}"; do
    name=${names[$k]}
    [ -n "$only" ] && [ "$only" != "$name" ] && continue
    in=${inputs[$k]}
    # skip a product whose C (12 bytes an entry, twice while chunks wait for the assembly)
    # would not fit in 80% of the memory
    est=$("$dsmm" spgemm "$in" --estimate 2>/dev/null | awk '/^nnz\(C\) estimate:/ {print $3}')
    est=${est:-0}
    mem_mib=$(awk '/MemTotal/ {print int($2 / 1024)}' /proc/meminfo)
    need_mib=$(python3 -c "print(int($est * 24 / 1048576))")
    if [ "$need_mib" -gt $((mem_mib * 8 / 10)) ]; then
        echo "$name: skipped: nnz(C) ~$est needs $need_mib MiB, $mem_mib MiB here"
        continue
    fi
    modes=(cpu ooc/4 ooc/16)
    [ "$gpu" = 1 ] && modes+=(gpu gpu/4 hybrid hybrid-auto)
    base=""
    cbytes=0
    for mode in "${modes[@]}"; do
        args=()
        case $mode in
        ooc/4) args=(--ooc-mem $((cbytes / 4))) ;;
        ooc/16) args=(--ooc-mem $((cbytes / 16))) ;;
        gpu) args=(--gpu) ;;
        gpu/4) args=(--gpu --ooc-mem $((cbytes / 4))) ;;
        hybrid) args=(--gpu --hybrid) ;;
        hybrid-auto) args=(--gpu --hybrid --gpu-ratio auto) ;;
        esac
        times=()
        rss=0
        ok=1
        for r in $(seq "$repeat"); do
            line=$(run1 "$in" "$out/C-$name-${mode//\//_}.dsmm" "${args[@]}") || { ok=0; break; }
            times+=("${line% *}")
            rss=${line#* }
        done
        if [ "$ok" = 0 ]; then
            printf '%-12s %-12s failed (see above)\n' "$name" "$mode"
            continue
        fi
        med=$(printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
        read -r flops nnz panels chunks gchunks hidden < <(python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
print(s["flops"], s["nnz_out"], "%dx%d" % (s.get("ooc_row_panels", 0), s.get("ooc_col_panels", 0)) if s.get("ooc") else "-",
      s.get("ooc_chunks", 1), s.get("ooc_chunks_gpu", 0), "%.0f%%" % (100 * s["ooc_hidden_fraction"]) if s.get("ooc_chunks_gpu") else "-")' "$out/last.json")
        f=$out/C-$name-${mode//\//_}.dsmm
        if [ "$mode" = cpu ]; then
            base=$med
            cbytes=$((nnz * 12))
            base_nnz=$nnz
            same=ref
        elif cmp -s "$out/C-$name-cpu.dsmm" "$f"; then
            same=identical
        elif [ "$nnz" = "$base_nnz" ]; then
            same=same-nnz # values summed in another order (test_ooc and test_gpu check them)
        else
            same=DIFFERENT
        fi
        ratio=$(python3 -c "print('%.2f' % ($base / $med) if $med > 0 else '-')")
        printf '%-12s %-12s %10.3g %12s %9s %9s %10.4f %7s %7s %8.1f %s\n' "$name" "$mode" "$flops" \
            "$nnz" "$panels" "$chunks($gchunks)" "$med" "$ratio" "$hidden" "$(awk -v r="$rss" 'BEGIN { print r / 1024 }')" "$same"
        [ "$mode" != cpu ] && rm -f "$f"
    done
    rm -f "$out/C-$name-cpu.dsmm"
done
