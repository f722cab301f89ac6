#!/bin/bash
# tests/cli/test_cli_spmm.sh: `dsmm spmm` as a user runs it: a hand-checked 3 x 3 product (and
# its transpose) compared value by value, products of tests/data files and random rectangular
# matrices against a naive awk reference (A * B and A^T * B; row, col, auto and ref kernels; 1
# and 2 threads; double and float), the random B (range, seed, thread-independence), the
# --stats JSON keys and their sanity (seconds, GB/s and % of the floor), and bad input (missing
# files, B with the wrong rows, bad --k, names and combinations, an absurd k, a missing output
# directory): the right exit code, a message naming the problem, and no output file.
# usage: test_cli_spmm.sh DSMM_BINARY DATA_DIR [TEST_BADINPUT_BINARY (unused)]
set -u
dsmm=$1
data=$2
. "$(dirname "$0")/lib.sh"

seed=${DSMM_TEST_SEED:-$(($(date +%s) ^ ($$ << 20)))}
echo "seed $seed (replay with DSMM_TEST_SEED=$seed)"

# The naive reference, in awk. ref MODE A B: op(A) * B as a Matrix Market array (column-major,
# %.17g), MODE n (A) or t (A^T); A is a coordinate file (real, integer or pattern; general,
# symmetric or skew; .gz too), B an array file.
cat >"$tmp/ref.awk" <<'EOF'
FNR == 1 { file++; field = $4; sym = $5; hdr = 0; next }
/^%/ { next }
file == 1 && !hdr { an = $1; am = $2; hdr = 1; next }
file == 1 {
    v = field == "pattern" ? 1 : $3
    add($1, $2, v)
    if (sym != "general" && $1 != $2) add($2, $1, sym == "skew-symmetric" ? -v : v)
    next
}
file == 2 && !hdr { bn = $1; bk = $2; hdr = 1; t = 0; next }
file == 2 { B[t % bn + 1, int(t / bn) + 1] = $1; t++ }
function add(i, j, v) { if (mode == "t") { x = i; i = j; j = x } ne++; ei[ne] = i; ej[ne] = j; ev[ne] = v }
END {
    m = mode == "t" ? am : an
    for (e = 1; e <= ne; e++) for (c = 1; c <= bk; c++) C[ei[e], c] += ev[e] * B[ej[e], c]
    printf "%%%%MatrixMarket matrix array real general\n%d %d\n", m, bk
    for (c = 1; c <= bk; c++) for (i = 1; i <= m; i++) printf "%.17g\n", C[i, c] + 0
}
EOF
ref() { # MODE A B > OUT
    local a=$2
    case $a in *.gz) gzip -dc "$a" >"$tmp/ref-a.mtx" && a=$tmp/ref-a.mtx ;; esac
    awk -v mode="$1" -f "$tmp/ref.awk" "$a" "$3"
}

# dense FILE N K SEED: an N x K Matrix Market array of values in [-4, 4) from SEED.
dense() {
    awk -v n="$2" -v k="$3" -v s="$4" 'BEGIN { srand(s); printf "%%%%MatrixMarket matrix array real general\n%d %d\n", n, k
        for (c = 0; c < n * k; c++) printf "%.17g\n", 8 * rand() - 4 }' >"$1"
}

# sparse FILE N M DENSITY SEED: a random N x M coordinate matrix; row 1 and column 1 empty.
sparse() {
    awk -v n="$2" -v m="$3" -v d="$4" -v s="$5" 'BEGIN { srand(s)
        for (i = 2; i <= n; i++) for (j = 2; j <= m; j++) if (rand() < d) { ne++; I[ne] = i; J[ne] = j; V[ne] = 20 * rand() - 10 }
        printf "%%%%MatrixMarket matrix coordinate real general\n%d %d %d\n", n, m, ne
        for (e = 1; e <= ne; e++) printf "%d %d %.17g\n", I[e], J[e], V[e] }' >"$1"
}

bw="--bandwidth 10" # a given bandwidth: no STREAM triad in every run
hep=$data/hep-th.mtx.gz

# --- help and registration ---------------------------------------------------------------------
expect_rc 0 "$dsmm" --help
expect_grep "$tmp/out" '^ +spmm '
expect_rc 0 "$dsmm" help spmm
expect_grep "$tmp/out" '^usage: dsmm spmm A \[--B FILE \| --k K --seed S\] \[-o C\]'
expect_grep "$tmp/out" '--kernel auto\|row\|col\|ref\|gpu'
expect_grep "$tmp/out" '--layout auto\|row\|col'
cp "$tmp/out" "$tmp/help1"
expect_rc 0 "$dsmm" spmm --help
if cmp -s "$tmp/out" "$tmp/help1"; then ok; else bad "'dsmm help spmm' differs from 'spmm --help'"; fi

# --- by hand: A = [2 0 -1; 0 3 0; 0.5 0 0], B = [1 4; 2 5; 3 6] ----------------------------------
#   A * B   = [-1 2; 6 15; 0.5 2]      A^T * B = [3.5 11; 6 15; -1 -4]   (column-major below)
cat >"$tmp/a3.mtx" <<'EOF'
%%MatrixMarket matrix coordinate real general
3 3 4
1 1 2
1 3 -1
2 2 3
3 1 0.5
EOF
printf '%%%%MatrixMarket matrix array real general\n3 2\n1\n2\n3\n4\n5\n6\n' >"$tmp/b32.mtx"
printf '%%%%MatrixMarket matrix array real general\n3 2\n-1\n6\n0.5\n2\n15\n2\n' >"$tmp/ab.want"
printf '%%%%MatrixMarket matrix array real general\n3 2\n3.5\n6\n-1\n11\n15\n-4\n' >"$tmp/atb.want"
for kern in "--layout row" "--layout col" "--layout auto" "--kernel ref"; do
    for t in 1 2; do
        tag=$(echo "$kern-$t" | tr -d ' -')
        expect_rc 0 "$dsmm" spmm "$tmp/a3.mtx" --B "$tmp/b32.mtx" -o "$tmp/ab-$tag.mtx" $kern -t $t $bw
        if cmp -s "$tmp/ab.want" "$tmp/ab-$tag.mtx"; then ok; else bad "A*B $kern -t $t: $(tr '\n' ' ' <"$tmp/ab-$tag.mtx")"; fi
        expect_rc 0 "$dsmm" spmm "$tmp/a3.mtx" --B "$tmp/b32.mtx" -o "$tmp/atb-$tag.mtx" --transpose $kern -t $t $bw
        if cmp -s "$tmp/atb.want" "$tmp/atb-$tag.mtx"; then ok; else bad "A^T*B $kern -t $t: $(tr '\n' ' ' <"$tmp/atb-$tag.mtx")"; fi
    done
done
# the same values in float
expect_rc 0 "$dsmm" spmm "$tmp/a3.mtx" --B "$tmp/b32.mtx" -o "$tmp/ab-float.mtx" --type float $bw
if cmp -s "$tmp/ab.want" "$tmp/ab-float.mtx"; then ok; else bad "A*B float: $(tr '\n' ' ' <"$tmp/ab-float.mtx")"; fi
expect_grep "$tmp/err" '^dsmm spmm: A 3 x 3 \(4 nnz\) x B k=2 float, row kernel, 1 thread: .* GFLOP/s, .* GB/s = [0-9]+% of the 10\.0 GB/s floor$'
# B given as a coordinate file is densified (B = [1 0; 0 0; 0 2])
printf '%%%%MatrixMarket matrix coordinate real general\n3 2 2\n1 1 1\n3 2 2\n' >"$tmp/bc.mtx"
expect_rc 0 "$dsmm" spmm "$tmp/a3.mtx" --B "$tmp/bc.mtx" -o "$tmp/abc.mtx" $bw
printf '%%%%MatrixMarket matrix array real general\n3 2\n2\n0\n0.5\n-2\n0\n0\n' >"$tmp/abc.want"
if cmp -s "$tmp/abc.want" "$tmp/abc.mtx"; then ok; else bad "A*Bcoord: $(tr '\n' ' ' <"$tmp/abc.mtx")"; fi

# --- real and random matrices against the awk reference; every kernel agrees -------------------
dense "$tmp/bh.mtx" 8361 5 $((seed + 1))
sparse "$tmp/r.mtx" 41 30 0.15 $((seed + 2))
dense "$tmp/br.mtx" 30 7 $((seed + 3))  # for A * B
dense "$tmp/brt.mtx" 41 7 $((seed + 4)) # for A^T * B
ref n "$hep" "$tmp/bh.mtx" >"$tmp/hep.want"
ref n "$tmp/r.mtx" "$tmp/br.mtx" >"$tmp/r.want"
ref t "$tmp/r.mtx" "$tmp/brt.mtx" >"$tmp/rt.want"
for kern in row col auto ref; do
    opt="--layout $kern"
    [ $kern = ref ] && opt="--kernel ref"
    for t in 1 2; do
        expect_rc 0 "$dsmm" spmm "$hep" --B "$tmp/bh.mtx" -o "$tmp/hep-$kern-$t.mtx" $opt -t $t $bw
        arr_same "$tmp/hep.want" "$tmp/hep-$kern-$t.mtx"
        expect_rc 0 "$dsmm" spmm "$tmp/r.mtx" --B "$tmp/br.mtx" -o "$tmp/r-$kern-$t.mtx" $opt -t $t $bw
        arr_same "$tmp/r.want" "$tmp/r-$kern-$t.mtx"
        expect_rc 0 "$dsmm" spmm "$tmp/r.mtx" --B "$tmp/brt.mtx" --transpose -o "$tmp/rt-$kern-$t.mtx" \
            $opt -t $t $bw
        arr_same "$tmp/rt.want" "$tmp/rt-$kern-$t.mtx"
        expect_grep "$tmp/err" "^dsmm spmm: A\\^T 30 x 41 \\([0-9]+ nnz\\) x B k=7 double, "
    done
    # float: the same product to float precision
    expect_rc 0 "$dsmm" spmm "$hep" --B "$tmp/bh.mtx" -o "$tmp/hep-$kern-f.mtx" $opt --type float -t 2 $bw
    arr_same "$tmp/hep.want" "$tmp/hep-$kern-f.mtx" 1e-5
done
# random B: row and col against ref on a pattern matrix (symmetric: A^T * B = A * B) and an abc
# network (not symmetric), 2 threads
for f in fe_4elt2.mtx.gz collins2007.txt.gz; do
    x=$tmp/${f%%.*}
    expect_rc 0 "$dsmm" spmm "$data/$f" --k 16 --seed $seed -o "$x-ref.mtx" --kernel ref $bw
    expect_rc 0 "$dsmm" spmm "$data/$f" --k 16 --seed $seed -o "$x-reft.mtx" --kernel ref --transpose $bw
    for kern in row col; do
        expect_rc 0 "$dsmm" spmm "$data/$f" --k 16 --seed $seed -o "$x-$kern.mtx" --layout $kern -t 2 $bw
        arr_same "$x-ref.mtx" "$x-$kern.mtx"
        expect_rc 0 "$dsmm" spmm "$data/$f" --k 16 --seed $seed -o "$x-$kern-t.mtx" --layout $kern \
            --transpose -t 2 $bw
        arr_same "$x-reft.mtx" "$x-$kern-t.mtx"
    done
done
arr_same "$tmp/fe_4elt2-ref.mtx" "$tmp/fe_4elt2-reft.mtx"
if cmp -s "$tmp/collins2007-ref.mtx" "$tmp/collins2007-reft.mtx"; then
    bad "collins2007: A * B = A^T * B, but A is not symmetric"
else ok; fi

# --- the random B: C = I * B shows it --------------------------------------------------------------
printf '%%%%MatrixMarket matrix coordinate pattern general\n5 5 5\n1 1\n2 2\n3 3\n4 4\n5 5\n' >"$tmp/i5.mtx"
expect_rc 0 "$dsmm" spmm "$tmp/i5.mtx" --k 9 --seed 7 -o "$tmp/b1.mtx" -t 1 $bw
expect_grep "$tmp/b1.mtx" '^5 9$'
if awk 'NR > 2 { n++; if ($1 < -1 || $1 >= 1) exit 1; s[$1] = 1 } END { exit !(n == 45 && length(s) == 45) }' \
    "$tmp/b1.mtx"; then ok; else bad "random B: 45 distinct values in [-1, 1) expected"; fi
expect_rc 0 "$dsmm" spmm "$tmp/i5.mtx" --k 9 --seed 7 -o "$tmp/b2.mtx" -t 2 --layout col $bw
if cmp -s "$tmp/b1.mtx" "$tmp/b2.mtx"; then ok; else bad "random B depends on threads or kernel"; fi
expect_rc 0 "$dsmm" spmm "$tmp/i5.mtx" --k 9 --seed 8 -o "$tmp/b3.mtx" $bw
if cmp -s "$tmp/b1.mtx" "$tmp/b3.mtx"; then bad "seeds 7 and 8 gave the same B"; else ok; fi
expect_rc 0 "$dsmm" spmm "$tmp/i5.mtx" --k 9 --seed 7 -o "$tmp/b4.mtx" --type float $bw
arr_same "$tmp/b1.mtx" "$tmp/b4.mtx" 1e-7
# without --k: 64 columns; without --seed: seed 1
expect_rc 0 "$dsmm" spmm "$tmp/i5.mtx" -o "$tmp/b5.mtx" $bw
expect_grep "$tmp/b5.mtx" '^5 64$'
expect_rc 0 "$dsmm" spmm "$tmp/i5.mtx" --k 64 --seed 1 -o "$tmp/b6.mtx" $bw
if cmp -s "$tmp/b5.mtx" "$tmp/b6.mtx"; then ok; else bad "defaults are not --k 64 --seed 1"; fi

# -o - writes C on stdout; without -o nothing is written
expect_rc 0 "$dsmm" spmm "$tmp/a3.mtx" --B "$tmp/b32.mtx" -o - $bw
if cmp -s "$tmp/ab.want" "$tmp/out"; then ok; else bad "-o -: $(head -c 200 "$tmp/out")"; fi
expect_rc 0 "$dsmm" spmm "$tmp/a3.mtx" --B "$tmp/b32.mtx" -q $bw
if [ -s "$tmp/out" ] || [ -s "$tmp/err" ]; then bad "-q without -o printed something"; else ok; fi

# --- --stats JSON: stable keys first, then the SpMM and roofline numbers ------------------------
fb=$data/facebook-combined.mtx.gz
expect_rc 0 "$dsmm" spmm "$fb" --k 64 -t 2 --stats "$tmp/fb.json" --repeat 3
expect_grep "$tmp/err" '^dsmm spmm: A 4039 x 4039 \(176468 nnz\) x B k=64 double, row kernel, [12] threads?: [0-9.e+-]+ s, [0-9.e+-]+ GFLOP/s, [0-9.e+-]+ GB/s = [0-9]+% of the [0-9.]+ GB/s floor$'
expect_rc 0 "$dsmm" spmm "$hep" --k 8 --layout col --stats "$tmp/col.json" -o "$tmp/col.mtx" --bandwidth 12.5
expect_rc 0 "$dsmm" spmm "$tmp/r.mtx" --B "$tmp/brt.mtx" --transpose --stats "$tmp/t.json" --type float $bw
expect_rc 0 "$dsmm" spmm "$hep" --k 8 --type float --layout row --stats "$tmp/hl.json" $bw
for j in fb col t hl; do
    if python3 - "$tmp/$j.json" $j <<'EOF'; then ok; else bad "--stats $j: $(cat "$tmp/$j.json")"; fi
import json, sys
d = json.load(open(sys.argv[1]))
keys = ["op", "algo", "ranks", "threads", "seconds", "io_seconds", "flops", "nnz_in", "nnz_out",
        "peak_bytes", "bytes_sent"]
assert list(d)[:len(keys)] == keys, list(d)
for k in ["k", "type", "layout", "bytes_min", "gbps", "bandwidth_gbps", "bandwidth_measured",
          "floor_seconds", "pct_of_floor", "workspace_bytes", "prep_seconds", "seconds_min"]:
    assert k in d, k
assert d["op"] == "spmm" and d["ranks"] == 1 and d["bytes_sent"] == 0, d
assert d["seconds"] > 0 and d["gbps"] > 0 and d["pct_of_floor"] > 0 and d["floor_seconds"] > 0, d
assert d["bandwidth_gbps"] > 0 and d["peak_bytes"] > 0 and d["io_seconds"] > 0, d
assert 0 < d["seconds_min"] <= d["seconds"], d
# the roofline numbers follow from each other
assert abs(d["gbps"] - d["bytes_min"] / d["seconds"] / 1e9) <= 1e-9 * d["gbps"], d
assert abs(d["floor_seconds"] - d["bytes_min"] / d["bandwidth_gbps"] / 1e9) <= 1e-9 * d["floor_seconds"], d
assert abs(d["pct_of_floor"] - 100 * d["floor_seconds"] / d["seconds"]) <= 1e-9 * d["pct_of_floor"], d
assert d["flops"] == 2 * d["nnz_a"] * d["k"], d
assert d["nnz_out"] == d["nrows"] * d["k"] and d["nnz_in"] == d["nnz_a"] + d["ncols"] * d["k"], d
w = 8 if d["type"] == "double" else 4
if sys.argv[2] == "fb":  # pattern A: row pointers and columns only; B and C once
    assert d["algo"] == "row" and d["layout"] == "row" and d["kernel_asked"] == "auto", d
    assert d["k"] == 64 and d["nnz_a"] == 176468 and d["repeat"] == 3 and d["b"] == "random", d
    assert d["bandwidth_measured"] == 1 and d["prep_transpose"] == 0 and d["prep_tiles"] == 0, d
    assert d["bytes_min"] == 4040 * 8 + 176468 * 8 + 2 * 4039 * 64 * 8, d
    # A's rows copied for the row kernel, in A's order: rows of B of 512 bytes
    assert d["prep_rows"] == 1 and d["rows_bytes"] > 176468 * 4 and d["rows_by_length"] == 0, d
elif sys.argv[2] == "hl":  # short rows of B (32 bytes) on a graph: rows stored by length
    assert d["algo"] == "row" and d["k"] == 8 and d["type"] == "float", d
    assert d["prep_rows"] == 1 and d["rows_by_length"] == 1 and d["rows_bytes"] > 31502 * 8, d
    assert d["prep_tiles"] == 0 and d["tiles_bytes"] == 0, d
elif sys.argv[2] == "col":  # col without --transpose: A in tiles beforehand, outside the timing
    assert d["algo"] == "col" and d["layout"] == "col" and d["prep_transpose"] == 0, d
    assert d["prep_tiles"] == 1 and d["tiles_bytes"] > 31502 * 6, d
    assert d["prep_rows"] == 0 and d["rows_bytes"] == 0 and d["rows_by_length"] == 0, d
    assert d["bandwidth_measured"] == 0 and d["bandwidth_gbps"] == 12.5 and d["k"] == 8, d
    assert d["nnz_a"] == 31502 and d["bytes_min"] == 8362 * 8 + 31502 * 16 + 2 * 8361 * 8 * 8, d
else:
    assert d["type"] == "float" and d["transpose"] == 1 and d["layout"] == "col", d
    assert d["algo"] == "col" and d["prep_transpose"] == 0 and d["nrows"] == 30 and d["k"] == 7, d
    assert d["prep_tiles"] == 1 and d["prep_rows"] == 0, d
EOF
done

# --- usage errors: exit 2, message, nothing written ---------------------------------------------
usage_case() { # substring, then the command line
    local sub=$1
    shift
    expect_rc 2 "$dsmm" "$@"
    expect_grep "$tmp/err" "$sub"
    expect_grep "$tmp/err" "see 'dsmm spmm --help'"
}
u=$tmp/u.mtx
usage_case "dsmm spmm: needs A" spmm -o "$u"
usage_case "dsmm spmm: --B and --k exclude each other" spmm "$tmp/a3.mtx" --B "$tmp/b32.mtx" --k 2 -o "$u"
usage_case "dsmm spmm: --B and --seed exclude each other" spmm "$tmp/a3.mtx" --B "$tmp/b32.mtx" --seed 2 -o "$u"
usage_case "dsmm spmm: --k: 0 is out of range" spmm "$tmp/a3.mtx" --k 0 -o "$u"
usage_case "dsmm spmm: --k: -4 is out of range" spmm "$tmp/a3.mtx" --k -4 -o "$u"
usage_case "dsmm spmm: --k: 'many' is not an integer" spmm "$tmp/a3.mtx" --k many -o "$u"
usage_case "dsmm spmm: --type: 'int' is not one of double\|float" spmm "$tmp/a3.mtx" --type int -o "$u"
usage_case "dsmm spmm: --layout: 'diag' is not one of auto\|row\|col" spmm "$tmp/a3.mtx" --layout diag -o "$u"
usage_case "dsmm spmm: --kernel: 'fast' is not one of auto\|row\|col\|ref\|gpu" spmm "$tmp/a3.mtx" --kernel fast -o "$u"
usage_case "dsmm spmm: --kernel ref and --layout col disagree" spmm "$tmp/a3.mtx" --kernel ref --layout col -o "$u"
usage_case "dsmm spmm: --repeat: 0 is out of range" spmm "$tmp/a3.mtx" --repeat 0 -o "$u"
usage_case "dsmm spmm: --bandwidth: '-3' is not|--bandwidth: -3 is out of range" spmm "$tmp/a3.mtx" --bandwidth -3 -o "$u"
usage_case "dsmm spmm: unexpected argument" spmm "$tmp/a3.mtx" "$tmp/b32.mtx" -o "$u"
usage_case "dsmm spmm: -o - and --stats - cannot both use stdout" spmm "$tmp/a3.mtx" -o - --stats -
expect_none "$u"

# --- runtime failures: exit 1, the problem named, no output -------------------------------------
f1=$tmp/f1.mtx
j1=$tmp/f1.json
expect_rc 1 "$dsmm" spmm "$tmp/missing.mtx" -o "$f1" --stats "$j1" $bw
expect_grep "$tmp/err" '^dsmm spmm: DSMM_ERR_IO: .*missing\.mtx'
expect_rc 1 "$dsmm" spmm "$tmp/a3.mtx" --B "$tmp/missing-b.mtx" -o "$f1" --stats "$j1" $bw
expect_grep "$tmp/err" '^dsmm spmm: DSMM_ERR_IO: .*missing-b\.mtx'
expect_rc 1 "$dsmm" spmm "$tmp/r.mtx" --B "$tmp/brt.mtx" -o "$f1" --stats "$j1" $bw
expect_grep "$tmp/err" '^dsmm spmm: --B .*brt\.mtx is 41 x 7 but A is 41 x 30: B needs 30 rows$'
expect_rc 1 "$dsmm" spmm "$tmp/r.mtx" --B "$tmp/br.mtx" --transpose -o "$f1" --stats "$j1" $bw
expect_grep "$tmp/err" '^dsmm spmm: --B .*br\.mtx is 30 x 7 but A\^T is 30 x 41: B needs 41 rows$'
printf '%%%%MatrixMarket matrix array real general\n2 2\n1\n2\nx\n4\n' >"$tmp/bbad.mtx"
expect_rc 1 "$dsmm" spmm "$tmp/a3.mtx" --B "$tmp/bbad.mtx" -o "$f1" $bw
expect_grep "$tmp/err" '^dsmm spmm: DSMM_ERR_FORMAT: .*bbad\.mtx'
# an absurd k: B and C beyond the memory budget (the default budget is the physical memory)
expect_rc 1 "$dsmm" spmm "$fb" --k 1000000000000 -o "$f1" --stats "$j1"
expect_grep "$tmp/err" '^dsmm spmm: DSMM_ERR_NOMEM: spmm: storage of B \(4039 x 1000000000000\) and C \(4039 x 1000000000000\) in double needs [0-9]+ bytes, more than the memory budget allows'
expect_rc 1 "$dsmm" spmm "$fb" --k 1000000000000000 -o "$f1"
expect_grep "$tmp/err" '^dsmm spmm: DSMM_ERR_NOMEM: .* more than any memory$'
expect_rc 1 "$dsmm" spmm "$tmp/a3.mtx" --k 100000 --mem 4M -o "$f1" $bw
expect_grep "$tmp/err" '^dsmm spmm: DSMM_ERR_NOMEM: .*B \(3 x 100000\) and C \(3 x 100000\) in double needs 4800000 bytes'
# a budget too small for the STREAM triad: the message says how to go on
expect_rc 1 "$dsmm" spmm "$tmp/a3.mtx" --B "$tmp/b32.mtx" -o "$f1" --mem 1M
expect_grep "$tmp/err" '^dsmm spmm: cannot measure the memory bandwidth \(give --bandwidth GBPS\): DSMM_ERR_NOMEM'
expect_rc 1 "$dsmm" spmm "$tmp/a3.mtx" --B "$tmp/b32.mtx" -o "$tmp/no/such/dir/c.mtx" $bw
expect_grep "$tmp/err" "^dsmm spmm: -o .*: directory '.*/no/such/dir' does not exist"
expect_rc 1 "$dsmm" spmm "$tmp/a3.mtx" --B "$tmp/b32.mtx" -o "$f1" --stats "$tmp/no/dir/s.json" $bw
expect_grep "$tmp/err" "^dsmm spmm: --stats .*: directory '.*/no/dir' does not exist"
expect_none "$f1" "$j1"
if "$dsmm" --version | grep -q '^CUDA: no'; then
    expect_rc 1 "$dsmm" spmm "$tmp/a3.mtx" -o "$f1" --kernel gpu $bw
    expect_grep "$tmp/err" '^dsmm spmm: --kernel gpu: this dsmm was built without CUDA'
    expect_none "$f1"
    expect_rc 1 "$dsmm" spmm "$tmp/a3.mtx" -o "$f1" --kernel cusparse $bw
    expect_grep "$tmp/err" '^dsmm spmm: --kernel cusparse: this dsmm was built without CUDA'
    expect_rc 1 "$dsmm" spmm "$tmp/a3.mtx" -o "$f1" --gpu $bw
    expect_grep "$tmp/err" '^dsmm spmm: --gpu: this dsmm was built without CUDA'
    expect_none "$f1"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
