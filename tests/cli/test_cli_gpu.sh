#!/bin/bash
# tests/cli/test_cli_gpu.sh: the CLI's CUDA paths on a device, against the CPU kernels of the same
# binary: `dsmm spgemm --kernel gpu` and `--kernel cusparse` (every entry, values within 1e-12),
# the out-of-core `--gpu` driver (one chunk, and many chunks under a small --gpu-mem) and
# `--gpu --hybrid`, `dsmm spmm --kernel gpu|cusparse` (float and double, k = 7, 64),
# `dsmm mcl --gpu` (the same clusters as the CPU run), CoLa's 1D SpMM with --kernel gpu and
# under --gpu, partial products resident on the
# device (`--gpu-resident`: spgemm and spmm with SUMMA and one-sided algorithms, and mcl; 1
# rank and with MPI 2 and 4), the --stats "gpu"
# record, and a pool too small for the product (exit 1, a message naming --gpu-mem, no file). Skips (77) when the
# binary was built without CUDA or sees no device.
# usage: test_cli_gpu.sh DSMM_BINARY DATA_DIR [TEST_BADINPUT_BINARY (unused)]
set -u
dsmm=$1
data=$2
. "$(dirname "$0")/lib.sh"

if ! "$dsmm" --version | grep -q '^CUDA: yes; GPU: ' || "$dsmm" --version | grep -q '^CUDA: yes; GPU: none'; then
    echo "no CUDA device visible to $dsmm: skipped"
    exit 77
fi
"$dsmm" --version | grep '^CUDA'
# where the script is, on stdout, so a run cut short by a time limit shows how far it got
section() { echo "[${SECONDS} s, $pass passed, $fail failed] $*"; }

# coo_same WANT GOT [RTOL]: two Matrix Market coordinate files with the same entries, values
# within RTOL relative plus 1e-10 of the largest magnitude (entries that cancel keep a rounding
# residue that depends on the summation order). Symmetric storage is expanded first: the writer stores one triangle when
# C is exactly symmetric, which the device's different summation order may not keep.
coo_norm() { # FILE: "i j v" lines of the whole matrix, sorted, then the header's dims last
    awk 'FNR == 1 { sym = ($5 == "symmetric"); h = 0; next }
         /^%/ { next }
         !h { d = $1 " " $2; h = 1; next }
         { v = (NF >= 3 ? $3 : 1); print $1, $2, v; n++; if (sym && $1 != $2) { print $2, $1, v; n++ } }
         END { print "dims", d > "/dev/stderr" }' "$1" 2>"$1.dims" | sort -k1,1n -k2,2n
}
coo_same() {
    local rtol=${3:-1e-12}
    coo_norm "$1" >"$tmp/want.norm"
    coo_norm "$2" >"$tmp/got.norm"
    if cmp -s "$1.dims" "$2.dims" && [ -s "$tmp/want.norm" ] && awk -v rtol="$rtol" '
        FNR == NR { I[FNR] = $1; J[FNR] = $2; V[FNR] = $3; n = FNR; a = ($3 < 0 ? -$3 : $3); if (a > big) big = a; next }
        { if ($1 != I[FNR] || $2 != J[FNR]) { printf "entry %d: (%s, %s), want (%s, %s)\n", FNR, $1, $2, I[FNR], J[FNR]; bad = 1; exit 1 }
          d = $3 - V[FNR]; if (d < 0) d = -d; s = ($3 < 0 ? -$3 : $3); t = (V[FNR] < 0 ? -V[FNR] : V[FNR])
          if (t > s) s = t; if (d > rtol * s + 1e-10 * big) { printf "entry %d: %s, want %s\n", FNR, $3, V[FNR]; bad = 1; exit 1 }
          got = FNR }
        END { if (bad) exit 1; if (got != n) { printf "%d entries, want %d\n", got, n; exit 1 } }' \
        "$tmp/want.norm" "$tmp/got.norm" >"$tmp/cmp" 2>&1; then
        ok
    else
        bad "$2 differs from $1: $(head -c 300 "$tmp/cmp") $(cat "$1.dims" "$2.dims" 2>/dev/null | tr '\n' ' ')"
    fi
}

mats="$data/fe_4elt2.mtx.gz $data/bcsstk13.mtx.gz $data/hep-th.mtx.gz $data/facebook-combined.mtx.gz"

section "spgemm"
# SpGEMM: dsmm's kernel and cuSPARSE against the CPU's hash kernel, entry by entry
for a in $mats; do
    b=$(basename "$a" .mtx.gz)
    expect_rc 0 "$dsmm" spgemm "$a" -o "$tmp/$b.cpu.mtx" --kernel hash --quiet
    expect_rc 0 "$dsmm" spgemm "$a" -o "$tmp/$b.gpu.mtx" --kernel gpu --stats "$tmp/$b.gpu.json" --quiet
    coo_same "$tmp/$b.cpu.mtx" "$tmp/$b.gpu.mtx"
    expect_grep "$tmp/$b.gpu.json" '"products_gpu": ?[1-9]'
    expect_rc 0 "$dsmm" spgemm "$a" -o "$tmp/$b.cus.mtx" --kernel cusparse --quiet
    coo_same "$tmp/$b.cpu.mtx" "$tmp/$b.cus.mtx"
    # the out-of-core driver on the device: one chunk, many chunks, and the hybrid split
    expect_rc 0 "$dsmm" spgemm "$a" -o "$tmp/$b.ooc.mtx" --gpu --quiet
    coo_same "$tmp/$b.cpu.mtx" "$tmp/$b.ooc.mtx"
    expect_rc 0 "$dsmm" spgemm "$a" -o "$tmp/$b.ooc4.mtx" --gpu --ooc-mem 4M --stats "$tmp/$b.ooc4.json" --quiet
    coo_same "$tmp/$b.cpu.mtx" "$tmp/$b.ooc4.mtx"
    expect_grep "$tmp/$b.ooc4.json" '"ooc_chunks_gpu": ?[1-9]'
    expect_rc 0 "$dsmm" spgemm "$a" -o "$tmp/$b.hyb.mtx" --gpu --hybrid --ooc-mem 4M --quiet
    coo_same "$tmp/$b.cpu.mtx" "$tmp/$b.hyb.mtx"
done

section "spmm"
# SpMM: dsmm's kernel and cuSPARSE against the row-wise CPU kernel, same random B
for a in "$data/fe_4elt2.mtx.gz" "$data/facebook-combined.mtx.gz"; do
    b=$(basename "$a" .mtx.gz)
    for k in 7 64; do
        for t in double float; do
            tol=1e-12
            [ $t = float ] && tol=1e-4
            expect_rc 0 "$dsmm" spmm "$a" --k $k --type $t -o "$tmp/$b.$k.$t.cpu.mtx" --kernel row --quiet
            expect_rc 0 "$dsmm" spmm "$a" --k $k --type $t -o "$tmp/$b.$k.$t.gpu.mtx" --kernel gpu --quiet
            arr_same "$tmp/$b.$k.$t.cpu.mtx" "$tmp/$b.$k.$t.gpu.mtx" $tol
            expect_rc 0 "$dsmm" spmm "$a" --k $k --type $t -o "$tmp/$b.$k.$t.cus.mtx" --kernel cusparse --quiet
            arr_same "$tmp/$b.$k.$t.cpu.mtx" "$tmp/$b.$k.$t.cus.mtx" $tol
        done
    done
done

section "mcl"
# MCL with the device multiplying the tiles: the CPU's clusters
g=$data/collins2007.txt.gz
expect_rc 0 "$dsmm" mcl "$g" --abc -o "$tmp/mcl.cpu" -q
expect_rc 0 "$dsmm" mcl "$g" --abc -o "$tmp/mcl.gpu" -q --gpu-min-flops 0 --stats "$tmp/mcl.gpu.json"
expect_rc 0 "$dsmm" clm dist "$tmp/mcl.cpu" "$tmp/mcl.gpu"
expect_grep "$tmp/out" '^d=0[[:space:]]'
cat "$tmp/out"
expect_grep "$tmp/mcl.gpu.json" '"products_gpu": ?[1-9]'

section "resident spgemm"
# SUMMA's stage products resident on the device (--gpu-resident): merged there, one download
for a in "$data/hep-th.mtx.gz" "$data/facebook-combined.mtx.gz"; do
    b=$(basename "$a" .mtx.gz)
    expect_rc 0 "$dsmm" spgemm "$a" -o "$tmp/$b.res.mtx" --algo summa --gpu-resident \
        --stats "$tmp/$b.res.json" --quiet
    coo_same "$tmp/$b.cpu.mtx" "$tmp/$b.res.mtx"
    expect_grep "$tmp/$b.res.json" '"gpu_resident": ?1'
    expect_grep "$tmp/$b.res.json" '"accumulate": ?"device"'
done
# the one-sided algorithms too: on one rank every item is the rank's own, multiplied into the
# accumulator on the device
for alg in rdma-c ws-local-c; do
    expect_rc 0 "$dsmm" spgemm "$data/hep-th.mtx.gz" -o "$tmp/res.$alg.mtx" --algo $alg --gpu-resident \
        --stats "$tmp/res.$alg.json" --quiet
    coo_same "$tmp/hep-th.cpu.mtx" "$tmp/res.$alg.mtx"
    expect_grep "$tmp/res.$alg.json" '"accumulate": ?"device"'
done
section "resident spmm"
# the distributed SpMM's C tile on the device: each stage's (item's) product added into it
# there, the tile downloaded once; the CPU's C for the same random B
fb=facebook-combined
for alg in summa rdma-c ws-local-c; do
    for t in double float; do
        tol=1e-12
        [ $t = float ] && tol=1e-4
        expect_rc 0 "$dsmm" spmm "$data/$fb.mtx.gz" --k 64 --type $t -o "$tmp/mres.$alg.$t.mtx" \
            --algo $alg --gpu-resident --stats "$tmp/mres.$alg.$t.json" --quiet
        arr_same "$tmp/$fb.64.$t.cpu.mtx" "$tmp/mres.$alg.$t.mtx" $tol
        expect_grep "$tmp/mres.$alg.$t.json" '"gpu_resident": ?1'
    done
done
section "cola"
# CoLa's 1D SpMM with the device: --kernel gpu for both parts, or AUTO under --gpu (each
# product above the threshold there)
expect_rc 0 "$dsmm" spmm "$data/$fb.mtx.gz" --k 64 -o "$tmp/cola.gpu.mtx" --algo cola --kernel gpu \
    --stats "$tmp/cola.gpu.json" --quiet
arr_same "$tmp/$fb.64.double.cpu.mtx" "$tmp/cola.gpu.mtx" 1e-12
expect_grep "$tmp/cola.gpu.json" '"lsc_kernel": ?"gpu"'
expect_grep "$tmp/cola.gpu.json" '"products_gpu": ?[1-9]'
expect_rc 0 "$dsmm" spmm "$data/$fb.mtx.gz" --k 64 -o "$tmp/cola.auto.mtx" --algo cola --gpu-min-flops 0 \
    --stats "$tmp/cola.auto.json" --quiet
arr_same "$tmp/$fb.64.double.cpu.mtx" "$tmp/cola.auto.mtx" 1e-12
expect_grep "$tmp/cola.auto.json" '"lsc_kernel": ?"auto"'
expect_grep "$tmp/cola.auto.json" '"products_gpu": ?[1-9]'
expect_rc 0 "$dsmm" spmm "$data/$fb.mtx.gz" --k 64 -o "$tmp/cola.res.mtx" --algo cola --gpu-resident \
    --stats "$tmp/cola.res.json" --quiet
arr_same "$tmp/$fb.64.double.cpu.mtx" "$tmp/cola.res.mtx" 1e-12
expect_grep "$tmp/cola.res.json" '"gpu_resident": ?1'
section "gcn"
# GCN training with the aggregation's products on the device: the CPU's losses (float)
cora=$data/cora
if "$dsmm" gcn --dataset "$cora" --epochs 1 -q >"$tmp/gcn.try" 2>&1 || ! grep -q OpenBLAS "$tmp/gcn.try"; then
expect_rc 0 "$dsmm" gcn --dataset "$cora" --epochs 20 -q --stats "$tmp/gcn.cpu.json"
expect_rc 0 "$dsmm" gcn --dataset "$cora" --epochs 20 -q --gpu-min-flops 0 --stats "$tmp/gcn.gpu.json"
expect_grep "$tmp/gcn.gpu.json" '"products_gpu": ?[1-9]'
if python3 - "$tmp/gcn.cpu.json" "$tmp/gcn.gpu.json" >"$tmp/pyerr" 2>&1 <<'EOF'; then ok; else bad "gcn --gpu: $(head -c 300 "$tmp/pyerr")"; fi
import json, sys
c, g = (json.load(open(f)) for f in sys.argv[1:3])
for a, b in zip(c["curve"]["loss"], g["curve"]["loss"]):
    assert abs(a - b) <= 1e-3 * abs(a), (a, b)  # float sums in another order
EOF
expect_rc 0 "$dsmm" gcn --dataset "$cora" --epochs 20 -q --gpu-resident --stats "$tmp/gcn.res.json"
if python3 - "$tmp/gcn.cpu.json" "$tmp/gcn.res.json" >"$tmp/pyerr" 2>&1 <<'EOF'; then ok; else bad "gcn --gpu-resident: $(head -c 300 "$tmp/pyerr")"; fi
import json, sys
c, g = (json.load(open(f)) for f in sys.argv[1:3])
for a, b in zip(c["curve"]["loss"], g["curve"]["loss"]):
    assert abs(a - b) <= 1e-3 * abs(a), (a, b)  # float sums in another order
EOF
else
    echo "OpenBLAS not loadable here (DSMM_OPENBLAS names one; bench/gpu/pack.sh --blas carries it): gcn cases skipped"
fi
expect_rc 0 "$dsmm" mcl "$g" --abc -o "$tmp/mcl.res" -q --gpu-resident --stats "$tmp/mcl.res.json"
expect_rc 0 "$dsmm" clm dist "$tmp/mcl.cpu" "$tmp/mcl.res"
expect_grep "$tmp/out" '^d=0[[:space:]]'
expect_grep "$tmp/mcl.res.json" '"products_gpu": ?[1-9]'
# a CPU kernel cannot be resident
expect_rc 1 "$dsmm" spgemm "$data/hep-th.mtx.gz" -o "$tmp/res.bad.mtx" --algo summa --gpu-resident \
    --kernel hash
expect_grep "$tmp/err" 'auto or gpu'
expect_none "$tmp/res.bad.mtx"

section "several ranks"
# several ranks sharing the device: SUMMA's tile products and MCL's pipelined expansion on it
if "$dsmm" --version | grep -q "MPI: yes" && mpi_found; then
    mpi_launcher
    a=$data/facebook-combined.mtx.gz
    for n in 2 4; do
        section "$n ranks"
        expect_rc 0 "${mpi[@]}" -n $n "$dsmm" spgemm "$a" -o "$tmp/summa$n.mtx" --algo summa --gpu-min-flops 0 \
            --stats "$tmp/summa$n.json" --quiet
        coo_same "$tmp/facebook-combined.cpu.mtx" "$tmp/summa$n.mtx"
        expect_grep "$tmp/summa$n.json" '"products_gpu": ?[1-9]'
        # resident: the stages' products summed on the device (pieces in device memory when
        # this MPI is CUDA-aware: mpi_device_buffers 1)
        expect_rc 0 "${mpi[@]}" -n $n "$dsmm" spgemm "$a" -o "$tmp/res$n.mtx" --algo summa --gpu-resident \
            --stats "$tmp/res$n.json" --quiet
        coo_same "$tmp/facebook-combined.cpu.mtx" "$tmp/res$n.mtx"
        expect_grep "$tmp/res$n.json" '"gpu_merges": ?[1-9]'
        expect_grep "$tmp/res$n.json" '"mpi_device_buffers": ?[01]'
        # with --prefetch the broadcasts are nonblocking, which take host buffers only: the
        # pieces are staged (mpi_device_buffers 0 even with a CUDA-aware MPI)
        expect_rc 0 "${mpi[@]}" -n $n "$dsmm" spgemm "$a" -o "$tmp/resp$n.mtx" --algo summa --gpu-resident \
            --prefetch --stats "$tmp/resp$n.json" --quiet
        coo_same "$tmp/facebook-combined.cpu.mtx" "$tmp/resp$n.mtx"
        expect_grep "$tmp/resp$n.json" '"mpi_device_buffers": ?0'
        # one-sided: own items multiplied on the device, partials fetched from other ranks
        # (stealing sends some away) uploaded into the accumulator
        for alg in rdma-a ws-random-a; do
            expect_rc 0 "${mpi[@]}" -n $n "$dsmm" spgemm "$a" -o "$tmp/res$n.$alg.mtx" --algo $alg \
                --gpu-resident --stats "$tmp/res$n.$alg.json" --quiet
            coo_same "$tmp/facebook-combined.cpu.mtx" "$tmp/res$n.$alg.mtx"
            expect_grep "$tmp/res$n.$alg.json" '"accumulate": ?"device"'
        done
        # SpMM: C's tile on the device (SUMMA's pieces in device memory when MPI is
        # CUDA-aware; one-sided partials from other ranks uploaded and added)
        for alg in summa rdma-a ws-random-a; do
            expect_rc 0 "${mpi[@]}" -n $n "$dsmm" spmm "$a" --k 64 -o "$tmp/mres$n.$alg.mtx" \
                --algo $alg --gpu-resident --stats "$tmp/mres$n.$alg.json" --quiet
            arr_same "$tmp/$fb.64.double.cpu.mtx" "$tmp/mres$n.$alg.mtx" 1e-12
            expect_grep "$tmp/mres$n.$alg.json" '"mpi_device_buffers": ?[01]'
        done
        expect_rc 0 "${mpi[@]}" -n $n "$dsmm" spmm "$a" --k 64 -o "$tmp/cola$n.mtx" --algo cola \
            --kernel gpu --quiet
        arr_same "$tmp/$fb.64.double.cpu.mtx" "$tmp/cola$n.mtx" 1e-12
        # the 1D panel resident (rowwise-1d's remote rows added on the host, then once there)
        for alg in cola cola-nofusion rowwise-1d; do
            expect_rc 0 "${mpi[@]}" -n $n "$dsmm" spmm "$a" --k 64 -o "$tmp/colares$n.$alg.mtx" \
                --algo $alg --gpu-resident --quiet
            arr_same "$tmp/$fb.64.double.cpu.mtx" "$tmp/colares$n.$alg.mtx" 1e-12
        done
    done
    expect_rc 0 "${mpi[@]}" -n 2 "$dsmm" mcl "$g" --abc -o "$tmp/mcl2.res" -q -te 2 --gpu-resident
    expect_rc 0 "$dsmm" clm dist "$tmp/mcl.cpu" "$tmp/mcl2.res"
    expect_grep "$tmp/out" '^d=0[[:space:]]'
    # two threads a rank: the pipelined SUMMA, with HipMCL's Table V idle times
    expect_rc 0 "${mpi[@]}" -n 2 "$dsmm" mcl "$g" --abc -o "$tmp/mcl2.gpu" -q -te 2 --gpu-min-flops 0 \
        --stats "$tmp/mcl2.json"
    expect_rc 0 "$dsmm" clm dist "$tmp/mcl.cpu" "$tmp/mcl2.gpu"
    expect_grep "$tmp/out" '^d=0[[:space:]]'
    expect_grep "$tmp/mcl2.json" '"gpu_products": ?[1-9]'
    expect_grep "$tmp/mcl2.json" '"gpu_idle_seconds": ?[0-9]'
else
    echo "no MPI or no mpirun: multi-rank cases skipped"
fi

section "small pool"
# a pool too small for the product: a clear failure, nothing written
expect_rc 1 "$dsmm" spgemm "$data/hep-th.mtx.gz" -o "$tmp/small.mtx" --kernel gpu --gpu-mem 64K
expect_grep "$tmp/err" 'gpu-mem'
expect_none "$tmp/small.mtx"

echo "test_cli_gpu: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
