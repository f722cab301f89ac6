#!/bin/bash
# tests/cli/test_cli_model.sh: `dsmm model` (the performance model, src/dist/model.c) as a user
# runs it: the text report on tests/data/cora (flops(A*A) 115158 and 2 * nnz * k for spmm, as
# dsmm info counts them), every grid option, the JSON (parsed; per-rank arrays consistent:
# bytes in = bytes out, rank flops summing to the total, synchronised >= end-to-end imbalance),
# the generators and --permute, --plot (data and scripts always, PNGs when gnuplot is on PATH,
# one line on stderr and exit 0 when it is not), and bad input: exit 2 for usage errors, 1 for
# runtime failures, a message naming the problem and no output file left behind.
# usage: test_cli_model.sh DSMM_BINARY DATA_DIR [TEST_BADINPUT_BINARY (unused)]
set -u
dsmm=$1
data=$2
. "$(dirname "$0")/lib.sh"
cora=$data/cora.adj.mtx.gz

# json_check FILE PYTHON-EXPRESSION...: each expression over d (the parsed FILE) is true.
json_check() {
    local f=$1
    shift
    local e
    for e in "$@"; do
        if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if eval(sys.argv[2]) else 1)' "$f" "$e" 2>"$tmp/pyerr"; then
            ok
        else
            bad "$f: not ($e) $(head -c 300 "$tmp/pyerr")"
        fi
    done
}

# --- help ----------------------------------------------------------------------------------
expect_rc 0 "$dsmm" model --help
expect_grep "$tmp/out" '^usage: dsmm model '
expect_grep "$tmp/out" '--grid PRxPC'
expect_rc 0 "$dsmm" help model
expect_rc 0 "$dsmm" --help
expect_grep "$tmp/out" '^ +model '

# --- text report on cora, A * A ------------------------------------------------------------
expect_rc 0 "$dsmm" model "$cora" --ranks 4
expect_grep "$tmp/out" '^A: +2708 x 2708, 10556 entries'
expect_grep "$tmp/out" '^B: += A$'
expect_grep "$tmp/out" '^product: +spgemm, C double, flops 115158, nnz\(C\) [0-9]+$'
expect_grep "$tmp/out" '^grid: +2 x 2 \(4 ranks\), 2 stages, 8 work items, [0-9]+ live$'
expect_grep "$tmp/out" '^local roofline: +AI [0-9.e+-]+ flop/B, roof [0-9.e+-]+ GFLOP/s$'
expect_grep "$tmp/out" '^alg +flops imb +MB in max +MB in avg +MB out max +MB total +gets max +gets total +AI flop/B +GFLOP/s +time s$'
for a in summa rdma-c rdma-a rdma-b; do
    expect_grep "$tmp/out" "^$a +[0-9]+\\.[0-9]{4} "
done
expect_grep "$tmp/out" '^summa( +[0-9.e+-]+){5} +0 +0 '
expect_grep "$tmp/out" '^end-to-end: +[0-9]+\.[0-9]{4} '
expect_grep "$tmp/out" '^synchronized: +[0-9]+\.[0-9]{4} '
expect_grep "$tmp/out" '^worst stage: +[01] of 2, max/avg [0-9.]+$'
if [ -s "$tmp/err" ]; then bad "stderr not empty: $(head -c 300 "$tmp/err")"; else ok; fi

# One rank: nothing moves.
expect_rc 0 "$dsmm" model "$cora" --grid 1x1
expect_grep "$tmp/out" '^rdma-a +1\.0000 +0\.0000 +0\.0000 +0\.0000 +0\.0000 +0 +0 +inf '
expect_grep "$tmp/out" '^end-to-end: +1\.0000 '

# --grid and --ranks together (agreeing), and the squarest grid of --ranks.
expect_rc 0 "$dsmm" model "$cora" --ranks 6 --grid 3x2
expect_grep "$tmp/out" '^grid: +3 x 2 \(6 ranks\), 4 stages'
expect_rc 0 "$dsmm" model "$cora" --ranks 6
expect_grep "$tmp/out" '^grid: +2 x 3 \(6 ranks\)'

# spmm: flops 2 * nnz(A) * k; -b gives the same numbers as B = A.
expect_rc 0 "$dsmm" model "$cora" --op spmm -k 16 --ranks 6 --type float
expect_grep "$tmp/out" '^B: +dense 2708 x 16, float$'
expect_grep "$tmp/out" '^product: +spmm, C float, flops 337792, nnz\(C\) 43328$'
expect_rc 0 "$dsmm" model "$cora" --grid 2x3 -b "$cora"
grep -v '^model seconds' "$tmp/out" | grep -v '^[AB]:' >"$tmp/withb"
expect_rc 0 "$dsmm" model "$cora" --grid 2x3
grep -v '^model seconds' "$tmp/out" | grep -v '^[AB]:' >"$tmp/same"
if cmp -s "$tmp/withb" "$tmp/same"; then ok; else bad "-b A differs from B = A: $(diff "$tmp/withb" "$tmp/same" | head -5)"; fi

# --stats -: the text goes to stderr, stdout is the one statistics record
expect_rc 0 "$dsmm" model "$cora" --grid 2x3 --stats -
json_check "$tmp/out" 'd["op"] == "model"'
expect_grep "$tmp/err" '^end-to-end:'

# --- JSON ----------------------------------------------------------------------------------
expect_rc 0 "$dsmm" model "$cora" --grid 2x3 --json "$tmp/m.json"
expect_grep "$tmp/out" '^end-to-end:'
json_check "$tmp/m.json" \
    'd["op"] == "spgemm" and d["ranks"] == 6 and d["pr"] == 2 and d["pc"] == 3' \
    'd["flops"] == 115158 and d["a"]["nnz"] == 10556 and d["b"]["source"] == "A"' \
    'set(d["algorithms"]) == {"summa", "rdma-c", "rdma-a", "rdma-b"}' \
    'all(len(v[k]) == 6 for v in d["algorithms"].values() for k in ("rank_flops", "rank_in", "rank_out", "rank_gets"))' \
    'all(sum(v["rank_in"]) == sum(v["rank_out"]) == v["bytes_total"] for v in d["algorithms"].values())' \
    'all(sum(v["rank_flops"]) == d["flops"] for v in d["algorithms"].values())' \
    'sum(d["algorithms"]["summa"]["rank_gets"]) == 0' \
    'd["imbalance"]["synchronized"] >= d["imbalance"]["end_to_end"] - 1e-12 >= 0' \
    'len(d["imbalance"]["stages"]) == d["stages"] == len(d["stage_lo"]) == len(d["stage_hi"])' \
    'len(d["stage_flops"]) == 6 and sum(map(sum, d["stage_flops"])) == d["flops"]' \
    'd["imbalance"]["end_to_end"] == d["algorithms"]["summa"]["flops_imbalance"]' \
    'all(d["algorithms"]["rdma-c"]["rank_in"][r] <= d["algorithms"]["summa"]["rank_in"][r] for r in range(6))' \
    'd["machine"] == {"bandwidth_gbs": 12.5, "peak_gflops": 1000, "mem_bw_gbs": 200}' \
    'd["permute_seed"] is None and d["cf"] > 1'
# '-': the JSON on stdout instead of the text.
expect_rc 0 "$dsmm" model "$cora" --ranks 2 --json - --bandwidth 25 --peak 50 --mem-bw 100
json_check "$tmp/out" 'd["ranks"] == 2' 'd["machine"]["bandwidth_gbs"] == 25' \
    'd["local_roof_gflops"] <= 50'
# 1x1: nothing moves, the inter-node AI is null (infinite).
expect_rc 0 "$dsmm" model "$cora" --ranks 1 --json "$tmp/one.json"
json_check "$tmp/one.json" 'all(v["inter_ai"] is None and v["bytes_total"] == 0 for v in d["algorithms"].values())'

# --- generators and --permute --------------------------------------------------------------
expect_rc 0 "$dsmm" model --gen rmat --scale 9 --edge-factor 4 --abcd 0.6,0.2,0.1,0.1 --seed 3 --grid 4x4 --json "$tmp/r.json"
expect_grep "$tmp/out" '^A: +512 x 512, [0-9]+ entries, pattern \(rmat scale 9, edge factor 4, abcd 0.6,0.2,0.1,0.1, seed 3\)$'
expect_rc 0 "$dsmm" model --gen rmat --scale 9 --edge-factor 4 --abcd 0.6,0.2,0.1,0.1 --seed 3 --grid 4x4 --permute 7 --json "$tmp/rp.json"
expect_grep "$tmp/out" 'randomly permuted$'
# A symmetric permutation keeps nnz, flops and nnz(C); the imbalance changes.
python3 -c 'import json,sys
a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2]))
sys.exit(0 if (a["flops"],a["nnz_c"],a["a"]["nnz"])==(b["flops"],b["nnz_c"],b["a"]["nnz"]) and b["permute_seed"]==7 else 1)' \
    "$tmp/r.json" "$tmp/rp.json" && ok || bad "--permute changed flops or nnz"
expect_rc 0 "$dsmm" model --gen er -n 300 --avg-degree 5 --symmetric --values --grid 3x5 --op spmm -k 7
expect_grep "$tmp/out" '^A: +300 x 300, [0-9]+ entries, double \(er n 300, average degree 5, seed 1\)$'
expect_grep "$tmp/out" '^grid: +3 x 5 \(15 ranks\)'
# A large grid runs fast: nothing runs distributed.
expect_rc 0 "$dsmm" model --gen rmat --scale 10 --edge-factor 4 --ranks 1024
expect_grep "$tmp/out" '^grid: +32 x 32 \(1024 ranks\), 32 stages, 32768 work items'

# --- --plot --------------------------------------------------------------------------------
expect_rc 0 "$dsmm" model "$cora" --grid 2x3 --plot "$tmp/plots"
for f in imbalance_heatmap stage_imbalance roofline; do
    if [ -s "$tmp/plots/$f.dat" ] && [ -s "$tmp/plots/$f.gp" ]; then ok; else bad "--plot did not write $f.dat and $f.gp"; fi
    if command -v gnuplot >/dev/null; then
        if [ -s "$tmp/plots/$f.png" ]; then ok; else bad "--plot with gnuplot did not make $f.png"; fi
    fi
done
expect_grep "$tmp/plots/imbalance_heatmap.dat" '^[0-9.e+-]+ [0-9.e+-]+ [0-9.e+-]+$'
expect_grep "$tmp/plots/roofline.gp" "^set output 'roofline.png'$"
# gnuplot missing: one line on stderr, exit 0, the numbers and the scripts all the same.
expect_rc 0 env PATH=/nonexistent "$dsmm" model "$cora" --grid 2x3 --plot "$tmp/plots2"
expect_grep "$tmp/err" "^dsmm model: gnuplot not found; wrote $tmp/plots2/\\*\\.gp and \\*\\.dat, run gnuplot on them$"
n=$(wc -l <"$tmp/err")
if [ "$n" -eq 1 ]; then ok; else bad "stderr has $n lines without gnuplot"; fi
expect_grep "$tmp/out" '^end-to-end:'
if [ -s "$tmp/plots2/roofline.gp" ] && [ ! -e "$tmp/plots2/roofline.png" ]; then ok; else bad "no gnuplot: scripts missing or a PNG appeared"; fi
# --plot on a file that is not a directory.
: >"$tmp/afile"
expect_rc 1 "$dsmm" model "$cora" --ranks 4 --plot "$tmp/afile"
expect_grep "$tmp/err" "^dsmm model: --plot $tmp/afile: not a directory$"

# --- bad input -----------------------------------------------------------------------------
usage_case() { # regex, then the arguments
    local re=$1
    shift
    expect_rc 2 "$dsmm" model "$@"
    expect_grep "$tmp/err" "$re"
}
usage_case '^dsmm model: --grid 3x5 has 15 ranks but --ranks is 16$' "$cora" --grid 3x5 --ranks 16
usage_case '^dsmm model: --ranks: 0 is out of range 1\.\.65536$' "$cora" --ranks 0
usage_case '^dsmm model: --ranks: 1000000000 is out of range 1\.\.65536$' "$cora" --ranks 1000000000
usage_case '^dsmm model: --json - and --stats - cannot both use stdout$' "$cora" --ranks 4 --json - --stats -
usage_case "^dsmm model: --grid: '0x4' is not PRxPC" "$cora" --grid 0x4
usage_case "^dsmm model: --grid: '4x' is not PRxPC" "$cora" --grid 4x
usage_case "^dsmm model: --grid: 'big' is not PRxPC" "$cora" --grid big
usage_case '^dsmm model: --grid 1000x1000: more than 65536 ranks$' "$cora" --grid 1000x1000
usage_case '^dsmm model: needs --ranks P or --grid PRxPC$' "$cora"
usage_case '^dsmm model: needs FILE or --gen rmat\|er$' --ranks 4
usage_case "^dsmm model: --gen: unknown generator 'foo'" --gen foo --ranks 4
usage_case '^dsmm model: FILE and --gen exclude each other$' "$cora" --gen rmat --ranks 4
usage_case '^dsmm model: -b is for spgemm' "$cora" --op spmm -b "$cora" --ranks 4
usage_case '^dsmm model: --permute is for A \* A and spmm, not with -b$' "$cora" -b "$cora" --permute 1 --ranks 4
usage_case "^dsmm model: --op: 'spmv' is not one of" "$cora" --op spmv --ranks 4
usage_case '^dsmm model: --bandwidth: -1 is out of range' "$cora" --ranks 4 --bandwidth -1
usage_case "^dsmm model: --peak: 'fast' is not a number" "$cora" --ranks 4 --peak fast
usage_case '^dsmm model: -k: 0 is out of range|^dsmm model: --k: 0 is out of range' "$cora" --op spmm -k 0 --ranks 4
usage_case '^dsmm model: --abcd' --gen rmat --abcd 0.5,0.5,0.5,0.5 --ranks 4

expect_rc 1 "$dsmm" model "$tmp/does-not-exist.mtx" --ranks 4 --json "$tmp/x.json"
expect_grep "$tmp/err" '^dsmm model: DSMM_ERR_IO: .*does-not-exist'
expect_none "$tmp/x.json"
printf '%%%%MatrixMarket matrix coordinate real general\n3 5 2\n1 1 1.0\n2 4 2.0\n' >"$tmp/rect.mtx"
expect_rc 1 "$dsmm" model "$tmp/rect.mtx" --ranks 4 --json "$tmp/x.json"
expect_grep "$tmp/err" '^dsmm model: A is 3 x 5: A \* A needs a square A \(or give -b FILE\)$'
expect_none "$tmp/x.json"
expect_rc 1 "$dsmm" model "$tmp/rect.mtx" --ranks 4 --permute 1
expect_grep "$tmp/err" '^dsmm model: --permute: A is 3 x 5, not square$'
# A rectangular A works with a B that fits, and for spmm.
printf '%%%%MatrixMarket matrix coordinate real general\n5 2 3\n1 1 1.0\n4 2 2.0\n5 1 3.0\n' >"$tmp/rect2.mtx"
expect_rc 0 "$dsmm" model "$tmp/rect.mtx" --ranks 4 -b "$tmp/rect2.mtx"
expect_grep "$tmp/out" '^product: +spgemm, C double, flops 2, nnz\(C\) 2$'
expect_rc 1 "$dsmm" model "$tmp/rect.mtx" --ranks 4 -b "$tmp/rect.mtx"
expect_grep "$tmp/err" '^dsmm model: DSMM_ERR_DIM: .*inner dimensions differ'
expect_rc 0 "$dsmm" model "$tmp/rect.mtx" --ranks 4 --op spmm -k 3
expect_grep "$tmp/out" '^product: +spmm, C double, flops 12, nnz\(C\) 9$'
expect_rc 1 "$dsmm" model "$cora" --ranks 4 --json "$tmp/no/such/dir/m.json"
expect_grep "$tmp/err" "^dsmm model: --json $tmp/no/such/dir/m.json: directory '$tmp/no/such/dir' does not exist$"
# Too many work items: a clear refusal, not an allocation of gigabytes.
expect_rc 1 "$dsmm" model --gen rmat --scale 16 --edge-factor 1 --grid 1x65536 --json "$tmp/x.json"
expect_grep "$tmp/err" "^dsmm model: DSMM_ERR_ARG: model: grid 1x65536 with 65536 stages has 4294967296 work items, more than the model's limit"
expect_none "$tmp/x.json"

echo "test_cli_model: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
