#!/bin/bash
# tests/cli/test_cli_dist.sh: `dsmm spgemm|spmm --algo summa|rdma-*|ws-*` as a user runs them: one process
# without a launcher (MPI singleton, or the serial comm layer in a build without MPI) and, when
# mpirun exists, 2, 3 and 4 ranks with square and non-square grids, prefetch, emulated
# workgroups and a random symmetric permutation: C equals the local engine's C (Matrix Market
# text compared; the inputs are pattern matrices, so every sum is exact), the stats JSON has
# the stable keys and the breakdown, `dsmm report` reads it; bad options and inputs fail with a
# message, a non-zero exit on every rank, and no output file. The 1D family (--algo cola,
# cola-nofusion, bcast-1d, rowwise-1d; --reorder, --comm, --workgroup-size) against the local
# SpMM, its volume table and the received bytes of its --stats.
# usage: test_cli_dist.sh DSMM_BINARY DATA_DIR [unused]
set -u
dsmm=$1
data=$2
. "$(dirname "$0")/lib.sh"

same() {
    if cmp -s "$1" "$2"; then ok; else bad "$1 and $2 differ"; fi
}

A=$data/facebook-combined.mtx.gz
R=$data/cora.adj.mtx.gz
"$dsmm" spgemm "$A" -o "$tmp/local.mtx" -q || bad "local spgemm failed"
"$dsmm" spgemm "$R" -o "$tmp/local_r.mtx" -q || bad "local spgemm (cora) failed"
"$dsmm" spmm "$R" --k 8 -o "$tmp/local_m.mtx" -q || bad "local spmm failed"

# One process, no launcher.
expect_rc 0 "$dsmm" spgemm "$A" --algo summa -o "$tmp/s1.mtx" --stats "$tmp/s1.json"
same "$tmp/local.mtx" "$tmp/s1.mtx"
for key in '"op":"spgemm"' '"algo":"summa"' '"ranks":1' '"ranks_detail":\[' '"stages":\[' \
    '"components":' '"nnz_out":' '"flops":'; do
    expect_grep "$tmp/s1.json" "$key"
done
expect_grep "$tmp/out" "breakdown: +comp"
expect_rc 0 "$dsmm" report "$tmp/s1.json"
expect_grep "$tmp/out" "Comm"
expect_rc 0 "$dsmm" spmm "$R" --k 8 --algo summa -o "$tmp/m1.mtx" -q --stats "$tmp/sm1.json"
same "$tmp/local_m.mtx" "$tmp/m1.mtx"
expect_grep "$tmp/sm1.json" '"gpu_resident":0'

# The one-sided algorithms on one process: the same C, the one-sided record.
rdma_algs="rdma-c rdma-a rdma-b ws-random-a ws-local-a ws-local-c"
for a in $rdma_algs; do
    expect_rc 0 "$dsmm" spgemm "$R" --algo "$a" -o "$tmp/o1_$a.mtx" --stats "$tmp/o1_$a.json"
    same "$tmp/local_r.mtx" "$tmp/o1_$a.mtx"
    expect_grep "$tmp/o1_$a.json" "\"algo\":\"$a\""
    expect_grep "$tmp/o1_$a.json" '"rdma":{"items":'
    expect_grep "$tmp/o1_$a.json" '"accumulate":"merge"'
    expect_grep "$tmp/o1_$a.json" '"gpu_resident":0'
    expect_grep "$tmp/out" "one-sided: "
    expect_rc 0 "$dsmm" spmm "$R" --k 8 --algo "$a" -o "$tmp/om1_$a.mtx" -q --stats "$tmp/om1_$a.json"
    same "$tmp/local_m.mtx" "$tmp/om1_$a.mtx"
    expect_grep "$tmp/om1_$a.json" '"gpu_resident":0'
done

# Options that need --algo summa, bad grids and unsupported combinations: usage errors.
expect_rc 2 "$dsmm" spgemm "$A" -o "$tmp/x.mtx" --grid 1x1
expect_grep "$tmp/err" "need a distributed --algo"
expect_rc 2 "$dsmm" spgemm "$A" -o "$tmp/x.mtx" --queue-cap 4
expect_grep "$tmp/err" "need a distributed --algo"
expect_rc 2 "$dsmm" spgemm "$A" -o "$tmp/x.mtx" --algo rdma-a --queue-cap 0
expect_rc 2 "$dsmm" spgemm "$A" -o "$tmp/x.mtx" --algo summa --grid 2by2
expect_grep "$tmp/err" "not PRxPC"
expect_rc 2 "$dsmm" spgemm "$A" -o "$tmp/x.mtx" --algo nonesuch
expect_grep "$tmp/err" "auto\|local\|summa"
expect_rc 2 "$dsmm" spgemm "$A" -o "$tmp/x.mtx" --algo summa --estimate
expect_rc 2 "$dsmm" spgemm "$A" -o "$tmp/x.mtx" --gpu-resident
expect_grep "$tmp/err" "gpu-resident needs a distributed --algo"
expect_rc 2 "$dsmm" spmm "$A" -o "$tmp/x.mtx" --gpu-resident
expect_grep "$tmp/err" "gpu-resident needs a distributed --algo"
expect_rc 2 "$dsmm" spmm "$A" -o "$tmp/x.mtx" --algo summa --gpu-resident --layout col
expect_grep "$tmp/err" "GPU kernel, not col"
# --gpu-resident without a device (or without CUDA): a clear failure, no file
if ! "$dsmm" --version | grep -q '^CUDA: yes; GPU: ' || "$dsmm" --version | grep -q '^CUDA: yes; GPU: none'; then
    expect_rc 1 "$dsmm" spmm "$A" -o "$tmp/res.mtx" --algo cola --gpu-resident
    expect_grep "$tmp/err" "CUDA"
    expect_none "$tmp/res.mtx"
    for alg in summa rdma-c ws-random-a; do
        expect_rc 1 "$dsmm" spgemm "$A" -o "$tmp/res.mtx" --algo $alg --gpu-resident
        expect_grep "$tmp/err" "CUDA"
        expect_none "$tmp/res.mtx"
        expect_rc 1 "$dsmm" spmm "$A" -o "$tmp/res.mtx" --algo $alg --gpu-resident
        expect_grep "$tmp/err" "CUDA"
        expect_none "$tmp/res.mtx"
    done
fi
expect_rc 1 "$dsmm" spgemm "$A" -o "$tmp/x.mtx" --algo summa --grid 2x2
expect_grep "$tmp/err" "grid 2x2 does not match 1 ranks"
expect_rc 1 "$dsmm" spgemm "$data/nonexistent.mtx" -o "$tmp/x.mtx" --algo summa
expect_grep "$tmp/err" "nonexistent.mtx"
[ -e "$tmp/x.mtx" ] && bad "x.mtx written by a failed run" || ok

if ! "$dsmm" --version | grep -q "MPI: yes" || ! mpi_found; then
    echo "no MPI or no mpirun: multi-rank cases skipped"
else
    mpi_launcher
    run() { local n=$1; shift; "${mpi[@]}" -n "$n" "$dsmm" "$@"; }
    for n in 2 3 4; do
        expect_rc 0 run "$n" spgemm "$A" -o "$tmp/p$n.mtx" --stats "$tmp/p$n.json" -q
        same "$tmp/local.mtx" "$tmp/p$n.mtx"
        expect_grep "$tmp/p$n.json" "\"ranks\":$n"
        expect_rc 0 run "$n" spgemm "$R" --algo summa --grid "1x$n" --prefetch -o "$tmp/q$n.mtx" -q
        same "$tmp/local_r.mtx" "$tmp/q$n.mtx"
        expect_rc 0 run "$n" spgemm "$R" --algo summa --grid "${n}x1" --permute 7 -o "$tmp/r$n.mtx" -q
        same "$tmp/local_r.mtx" "$tmp/r$n.mtx"
        expect_rc 0 run "$n" spmm "$R" --k 8 --algo summa -o "$tmp/m$n.mtx" -q
        # dense C: summation order differs between grids; compare numerically
        if awk 'NR==FNR { if (FNR > 2) a[FNR] = $1; next }
                FNR > 2 { d = $1 - a[FNR]; if (d < 0) d = -d; s = ($1 < 0 ? -$1 : $1);
                          if (d > 1e-12 * (s > 1 ? s : 1)) bad = 1 }
                END { exit bad }' "$tmp/local_m.mtx" "$tmp/m$n.mtx"; then ok; else bad "spmm at $n ranks differs"; fi
    done
    # One-sided algorithms on square and non-square grids, queues of one slot, prefetch.
    for n in 3 4; do
        for a in $rdma_algs; do
            expect_rc 0 run "$n" spgemm "$R" --algo "$a" --queue-cap 1 --prefetch -o "$tmp/o${n}_$a.mtx" -q
            same "$tmp/local_r.mtx" "$tmp/o${n}_$a.mtx"
        done
    done
    # An overloaded rank (test hook): its work is stolen.
    mpi_launcher DSMM_TEST_DELAY
    expect_rc 0 env DSMM_TEST_DELAY=0:0.05 "${mpi[@]}" -n 4 "$dsmm" spgemm "$R" \
        --algo ws-local-c --stats "$tmp/steal.json" -q
    expect_grep "$tmp/steal.json" '"stolen":[1-9]'
    mpi_launcher # (the others run without the delay)
    # Emulated workgroups: with groups of 2 ranks some bytes cross groups, with groups of 4 none.
    expect_rc 0 run 4 spgemm "$A" --algo summa --workgroup-size 2 --stats "$tmp/w2.json" -q
    expect_grep "$tmp/w2.json" '"workgroups":2'
    expect_grep "$tmp/w2.json" '"bytes_recv_inter":[1-9]'
    expect_rc 0 run 4 spgemm "$A" --algo summa --workgroup-size 4 --stats "$tmp/w4.json" -q
    expect_grep "$tmp/w4.json" '"workgroups":1'
    if grep -Eq '"bytes_recv_inter":[1-9]' "$tmp/w4.json"; then bad "inter bytes in one group"; else ok; fi
    expect_rc 0 "$dsmm" report "$tmp/w2.json" "$tmp/p4.json"
    # A bad input: every rank fails, the message names the file and line, no output.
    printf '%%%%MatrixMarket matrix coordinate pattern general\n4 4 3\n1 2\n2 x\n3 4\n' >"$tmp/bad.mtx"
    expect_rc 1 run 3 spgemm "$tmp/bad.mtx" -o "$tmp/y.mtx"
    expect_grep "$tmp/err" "bad.mtx:4"
    [ -e "$tmp/y.mtx" ] && bad "y.mtx written by a failed run" || ok
    # --algo local under a launch of several processes is refused.
    expect_rc 2 run 2 spgemm "$A" --algo local -o "$tmp/z.mtx"
    # The 1D CoLa family: the serial product (B drawn by vertex), every algorithm, reordered
    # or not, workgroups of 1 and 2; the volume table; the counts in --stats.
    for n in 2 3 4; do
        for a in cola cola-nofusion bcast-1d rowwise-1d; do
            for ro in none rabbit; do
                expect_rc 0 run "$n" spmm "$R" --k 8 --algo "$a" --reorder "$ro" --workgroup-size 2 \
                    -o "$tmp/c${n}_$a.mtx" --stats "$tmp/c${n}_$a.json"
                expect_grep "$tmp/out" "V_FC"
                expect_grep "$tmp/out" "^ *total "
                if awk 'NR==FNR { if (FNR > 2) a[FNR] = $1; next }
                        FNR > 2 { d = $1 - a[FNR]; if (d < 0) d = -d; s = ($1 < 0 ? -$1 : $1);
                                  if (d > 1e-12 * (s > 1 ? s : 1)) bad = 1 }
                        END { exit bad }' "$tmp/local_m.mtx" "$tmp/c${n}_$a.mtx"; then ok
                else bad "spmm --algo $a --reorder $ro at $n ranks differs"; fi
            done
            expect_grep "$tmp/c${n}_$a.json" "\"algo\":\"$a\""
            expect_grep "$tmp/c${n}_$a.json" '"v_fc_bytes":[1-9]'
            expect_grep "$tmp/c${n}_$a.json" '"lsc_kernel":"row","rsc_kernel":"col","gpu_resident":0'
        done
        # nofusion receives exactly V_FC; with fusion the inter-workgroup bytes are at most so.
        if awk -F'[:,]' '{ for (i = 1; i < NF; i++) v[$i] = $(i + 1) + 0 }
                END { exit !(v["\"recv_intra_bytes\""] + v["\"recv_inter_bytes\""] == v["\"v_fc_bytes\""]) }' \
            "$tmp/c${n}_cola-nofusion.json"; then ok; else bad "nofusion at $n ranks did not receive V_FC"; fi
        if awk -F'[:,]' '{ for (i = 1; i < NF; i++) v[$i] = $(i + 1) + 0 }
                END { exit !(v["\"inter_fused_bytes\""] <= v["\"inter_nofusion_bytes\""] &&
                             v["\"recv_inter_bytes\""] == v["\"inter_fused_bytes\""]) }' \
            "$tmp/c${n}_cola.json"; then ok; else bad "cola at $n ranks: inter-workgroup bytes"; fi
    done
    # The local kernels: --layout sets the part that defaults to the other, --kernel ref both;
    # the same C.
    for kk in "--layout col:col:col" "--layout row:row:row" "--kernel ref:ref:ref"; do
        opt=${kk%%:*}
        want="\"lsc_kernel\":\"$(echo "$kk" | cut -d: -f2)\",\"rsc_kernel\":\"${kk##*:}\""
        expect_rc 0 run 3 spmm "$R" --k 8 --algo cola $opt -o "$tmp/ck.mtx" --stats "$tmp/ck.json" -q
        expect_grep "$tmp/ck.json" "$want"
        if awk 'NR==FNR { if (FNR > 2) a[FNR] = $1; next }
                FNR > 2 { d = $1 - a[FNR]; if (d < 0) d = -d; s = ($1 < 0 ? -$1 : $1);
                          if (d > 1e-12 * (s > 1 ? s : 1)) bad = 1 }
                END { exit bad }' "$tmp/local_m.mtx" "$tmp/ck.mtx"; then ok; else bad "cola $opt differs"; fi
    done
    if ! "$dsmm" --version | grep -q '^CUDA: yes'; then
        expect_rc 1 run 2 spmm "$R" --k 8 --algo cola --kernel gpu -o "$tmp/ck2.mtx"
        expect_grep "$tmp/err" "without CUDA"
        expect_none "$tmp/ck2.mtx"
    fi
    for c in alltoallv neighbor put; do
        expect_rc 0 run 3 spmm "$R" --k 8 --algo cola-nofusion --comm "$c" -o "$tmp/n_$c.mtx" -q
        if awk 'NR==FNR { if (FNR > 2) a[FNR] = $1; next }
                FNR > 2 { d = $1 - a[FNR]; if (d < 0) d = -d; s = ($1 < 0 ? -$1 : $1);
                          if (d > 1e-12 * (s > 1 ? s : 1)) bad = 1 }
                END { exit bad }' "$tmp/local_m.mtx" "$tmp/n_$c.mtx"; then ok; else bad "--comm $c differs"; fi
    done
    # Bad combinations: exit 2, nothing written.
    expect_rc 2 run 2 spmm "$R" --k 8 --algo cola --reorder bogus -o "$tmp/bad1.mtx"
    expect_grep "$tmp/err" "reorder"
    expect_rc 2 run 2 spmm "$R" --k 8 --algo summa --reorder rabbit -o "$tmp/bad1.mtx"
    expect_rc 2 run 2 spmm "$R" --k 8 --algo cola --grid 2x1 -o "$tmp/bad1.mtx"
    expect_rc 2 run 2 spgemm "$R" --algo cola -o "$tmp/bad1.mtx"
    expect_rc 1 run 2 spmm "$data/nonexistent.mtx" --k 8 --algo cola -o "$tmp/bad1.mtx"
    expect_grep "$tmp/err" "nonexistent.mtx"
    expect_none "$tmp/bad1.mtx"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
