#!/usr/bin/env bash
# bench/mcl_planted.sh: dsmm mcl on planted-partition graphs (dsmm gen planted, seed 7) at
# -I 1.4, 2 and 4: cluster count and adjusted Rand index against the planted blocks
# (dsmm clm dist --index).
# usage: bench/mcl_planted.sh DSMM_BINARY [OUTDIR]
set -eu
dsmm=$1
out=${2:-/tmp/dsmm-mcl-planted}
mkdir -p "$out"
printf "%6s %6s %6s %8s %4s %8s %8s\n" n blocks p_in p_out I clusters ARI
for cfg in "1000 10 0.1 0.002" "5000 20 0.05 0.0005" "5000 50 0.2 0.001" "20000 40 0.02 0.0002"; do
    set -- $cfg
    "$dsmm" gen planted -n "$1" --blocks "$2" --p-in "$3" --p-out "$4" --seed 7 -o "$out/pl.mtx" \
        --truth "$out/pl.truth" >/dev/null
    for I in 1.4 2 4; do
        "$dsmm" mcl "$out/pl.mtx" -I "$I" -base 0 -o "$out/pl.out" -q -V
        ari=$("$dsmm" clm dist --index "$out/pl.truth" "$out/pl.out" | sed -n 's/.*arand=\([0-9.]*\).*/\1/p')
        printf "%6s %6s %6s %8s %4s %8s %8s\n" "$1" "$2" "$3" "$4" "$I" "$(wc -l <"$out/pl.out")" "$ari"
    done
done
