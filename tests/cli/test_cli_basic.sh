#!/bin/bash
# tests/cli/test_cli_basic.sh: the dsmm command as a user runs it: help, version, exit codes of
# usage errors, `dsmm info` numbers on tests/data, gen -> convert -> info round trips, --stats
# JSON, and generators giving identical files for --threads 1 and 2.
# usage: test_cli_basic.sh DSMM_BINARY DATA_DIR [TEST_BADINPUT_BINARY (unused)]
set -u
dsmm=$1
data=$2
. "$(dirname "$0")/lib.sh"

# --- help, version -------------------------------------------------------------------------
expect_rc 0 "$dsmm" --help
expect_grep "$tmp/out" '^ +info '
expect_grep "$tmp/out" '^ +convert '
expect_rc 0 "$dsmm" --version
expect_grep "$tmp/out" '^dsmm [0-9]+\.[0-9]+\.[0-9]+$'
expect_grep "$tmp/out" '^MPI: (yes|no)$'
expect_grep "$tmp/out" '^CUDA: (yes|no); GPU: '
expect_grep "$tmp/out" '^OpenMP: (yes|no), [0-9]+ thread'
for c in info gen convert; do
    expect_rc 0 "$dsmm" help $c
    expect_grep "$tmp/out" "^usage: dsmm $c "
    expect_grep "$tmp/out" '--threads N'
    cp "$tmp/out" "$tmp/help1"
    expect_rc 0 "$dsmm" $c --help
    if cmp -s "$tmp/out" "$tmp/help1"; then ok; else bad "'dsmm help $c' differs from '$c --help'"; fi
done

# --- usage errors: exit 2, "dsmm CMD: " message and the --help hint -----------------------------
usage_case() { # substring, then the command line
    local sub=$1
    shift
    expect_rc 2 "$dsmm" "$@"
    expect_grep "$tmp/err" "$sub"
}
expect_rc 2 "$dsmm"
usage_case "unknown command 'frobnicate'" frobnicate
usage_case "dsmm info: unknown option '--frob'" info --frob "$data/cora.adj.mtx.gz"
usage_case "see 'dsmm info --help'" info --frob "$data/cora.adj.mtx.gz"
usage_case "dsmm info: needs one FILE" info
usage_case "dsmm info: --procs: 'x' is not an integer" info --procs x "$data/cora.adj.mtx.gz"
usage_case "dsmm info: --procs: 0 is out of range" info --procs 0 "$data/cora.adj.mtx.gz"
usage_case "dsmm info: --procs needs a value" info "$data/cora.adj.mtx.gz" --procs
usage_case "dsmm info: --threads: '2x' is not an integer" info -t 2x "$data/cora.adj.mtx.gz"
usage_case "dsmm info: --mem: 'lots' is not a size" info --mem lots "$data/cora.adj.mtx.gz"
usage_case "dsmm info: --format: 'csv' is not one of" info --format csv "$data/cora.adj.mtx.gz"
usage_case "dsmm info: --dup: 'avg' is not one of" info --dup avg "$data/cora.adj.mtx.gz"
usage_case "dsmm info: --json takes no value" info --json=1 "$data/cora.adj.mtx.gz"
usage_case "dsmm info: unexpected argument" info "$data/cora.adj.mtx.gz" extra
usage_case "dsmm gen: unknown generator 'foo'" gen foo -o "$tmp/x.mtx"
usage_case "dsmm gen: needs -o OUT" gen rmat
usage_case "dsmm gen: --truth is for planted only" gen er -o "$tmp/x.mtx" --truth "$tmp/t"
usage_case "dsmm gen: --abcd" gen rmat -o "$tmp/x.mtx" --abcd 0.5,0.5,0.5,0.5
usage_case "dsmm gen: --p-in: 2 is out of range" gen planted -o "$tmp/x.mtx" --p-in 2
usage_case "dsmm gen: --seed: '-1' is not a non-negative integer" gen er -o "$tmp/x.mtx" --seed -1
usage_case "dsmm gen: -o - and --stats - cannot both use stdout" gen rmat -o - --stats -
usage_case "dsmm convert: needs IN and OUT" convert "$data/cora.adj.mtx.gz"
usage_case "dsmm convert: OUT - and --stats - cannot both use stdout" convert "$data/cora.adj.mtx.gz" - --stats -
usage_case "dsmm convert: --to: 'csv' is not one of" convert --to csv "$data/cora.adj.mtx.gz" "$tmp/x"
if [ -e "$tmp/x.mtx" ] || [ -e "$tmp/x" ]; then bad "a usage error created an output"; else ok; fi

# --- runtime failure: exit 1 with the library's message ----------------------------------------
expect_rc 1 "$dsmm" info "$tmp/does-not-exist.mtx"
expect_grep "$tmp/err" "^dsmm info: DSMM_ERR_IO: .*does-not-exist"
expect_rc 1 "$dsmm" info --mem 1K "$data/hep-th.mtx.gz"
expect_grep "$tmp/err" "^dsmm info: DSMM_ERR_NOMEM"

# --- dsmm info on real data (numbers from tests/data/README.md) ---------------------------------
info_case() { # file n stored nnz diag flops
    expect_rc 0 "$dsmm" info "$data/$1"
    expect_grep "$tmp/out" "^dims: +$2 x $2\$"
    expect_grep "$tmp/out" "^stored entries: +$3\$"
    expect_grep "$tmp/out" "^nnz: +$4\$"
    expect_grep "$tmp/out" "^diagonal entries: +$5\$"
    expect_grep "$tmp/out" "^flops\\(A\\*A\\): +$6\$"
    expect_grep "$tmp/out" "^pattern symmetric: +yes\$"
    expect_grep "$tmp/out" "^numeric symmetric: +yes\$"
    expect_grep "$tmp/out" "^header: +coordinate .* symmetric\$"
}
info_case hep-th.mtx.gz 8361 15751 31502 0 273668
info_case fe_4elt2.mtx.gz 11143 32818 65636 0 395450
info_case cora.adj.mtx.gz 2708 5278 10556 0 115158
info_case citeseer.adj.mtx.gz 3327 4676 9228 124 63576
info_case bcsstk13.mtx.gz 2003 42943 83883 2003 4554541
expect_grep "$tmp/out" '^values: +double$'
expect_grep "$tmp/out" '^grid: +2 x 2 \(4 procs\)$'
expect_rc 0 "$dsmm" info "$data/collins2007.txt.gz"
expect_grep "$tmp/out" '^format: +abc \(gzip\)$'
expect_grep "$tmp/out" '^dims: +1622 x 1622$'
expect_grep "$tmp/out" '^stored entries: +9074$'
expect_grep "$tmp/out" '^labels: +1622$'
expect_rc 0 "$dsmm" info "$data/p2p-Gnutella08.edgelist.gz" --procs 6
expect_grep "$tmp/out" '^dims: +6301 x 6301$'
expect_grep "$tmp/out" '^nnz: +20777$'
expect_grep "$tmp/out" '^grid: +2 x 3 \(6 procs\)$'
expect_rc 0 "$dsmm" info --json --procs 12 "$data/cora.adj.mtx.gz"
if python3 - "$tmp/out" <<'EOF'; then ok; else bad "info --json"; fi
import json, sys
d = json.load(open(sys.argv[1]))
assert d["nrows"] == 2708 and d["ncols"] == 2708, d
assert d["stored"] == 5278 and d["nnz"] == 10556, d
assert d["header"] == {"layout": "coordinate", "field": "pattern", "symmetry": "symmetric"}, d
assert d["pattern_symmetric"] is True and d["flops_aa"] == 115158, d
assert d["grid_rows"] == 3 and d["grid_cols"] == 4 and d["procs"] == 12, d
assert d["row_degree"]["max"] == 168, d
assert abs(d["tile_imbalance"] - d["tile_nnz_max"] / (10556 / 12)) < 1e-9, d
EOF

# --- gen -> convert -> info round trips --------------------------------------------------------
nnz_of() { "$dsmm" info "$1" | sed -n 's/^nnz: *//p'; }
dims_of() { "$dsmm" info "$1" | sed -n 's/^dims: *//p'; }
for g in rmat er planted; do
    d="$tmp/$g"
    mkdir -p "$d"
    expect_rc 0 "$dsmm" gen $g --scale 9 --n 700 --seed 5 --values -o "$d/a.mtx"
    expect_rc 0 "$dsmm" convert "$d/a.mtx" "$d/a.bin"
    expect_rc 0 "$dsmm" convert "$d/a.bin" "$d/b.mtx"
    if cmp -s "$d/a.mtx" "$d/b.mtx"; then ok; else bad "$g: mtx -> bin -> mtx changed the file"; fi
    expect_rc 0 "$dsmm" convert "$d/b.mtx" "$d/b.abc"
    expect_rc 0 "$dsmm" convert "$d/b.abc" "$d/c.mtx"
    expect_rc 0 "$dsmm" convert "$d/b.abc" "$d/c.abc"
    # labels are kept; lines may come in another order (indices follow first appearance)
    if cmp -s <(sort "$d/b.abc") <(sort "$d/c.abc"); then ok; else bad "$g: abc -> abc changed"; fi
    n1=$(nnz_of "$d/a.mtx")
    n2=$(nnz_of "$d/c.mtx")
    if [ -n "$n1" ] && [ "$n1" -gt 0 ] && [ "$n1" = "$n2" ]; then ok; else bad "$g: nnz $n1 -> $n2"; fi
    # symmetric graphs with self-loops have no isolated vertex at this density (R-MAT's skew
    # leaves some, so only nnz is compared there): dims survive abc
    expect_rc 0 "$dsmm" gen $g --scale 7 --edge-factor 30 --n 300 --avg-degree 30 --p-in 0.5 \
        --p-out 0.05 --symmetric --self-loops -o "$d/s.mtx"
    expect_rc 0 "$dsmm" convert "$d/s.mtx" "$d/s.abc"
    expect_rc 0 "$dsmm" convert "$d/s.abc" "$d/s2.mtx"
    if { [ $g = rmat ] || [ "$(dims_of "$d/s.mtx")" = "$(dims_of "$d/s2.mtx")" ]; } &&
        [ "$(nnz_of "$d/s.mtx")" = "$(nnz_of "$d/s2.mtx")" ]; then ok; else
        bad "$g: symmetric mtx -> abc -> mtx: $(dims_of "$d/s.mtx") -> $(dims_of "$d/s2.mtx")"
    fi
    expect_rc 0 "$dsmm" info "$d/s2.mtx"
    expect_grep "$tmp/out" '^pattern symmetric: +yes$'
    # same seed, different thread counts: identical bytes
    expect_rc 0 "$dsmm" gen $g --scale 9 --n 700 --seed 11 --threads 1 -o "$d/t1.mtx"
    expect_rc 0 "$dsmm" gen $g --scale 9 --n 700 --seed 11 --threads 2 -o "$d/t2.mtx"
    if cmp -s "$d/t1.mtx" "$d/t2.mtx"; then ok; else bad "$g: --threads 1 and 2 differ"; fi
    expect_rc 0 "$dsmm" gen $g --scale 9 --n 700 --seed 12 --threads 2 -o "$d/t3.mtx"
    if cmp -s "$d/t1.mtx" "$d/t3.mtx"; then bad "$g: seeds 11 and 12 give the same file"; else ok; fi
done
# planted truth: one block per line, every vertex once
expect_rc 0 "$dsmm" gen planted --n 400 --blocks 5 -o "$tmp/p.mtx" --truth "$tmp/truth.txt"
if [ "$(wc -l <"$tmp/truth.txt")" -eq 5 ] &&
    [ "$(tr '\t' '\n' <"$tmp/truth.txt" | sort -n | uniq | wc -l)" -eq 400 ]; then ok; else
    bad "planted truth file: $(head -c 200 "$tmp/truth.txt")"
fi
# all outputs or none: an unwritable truth file leaves no matrix file behind
expect_rc 1 "$dsmm" gen planted --n 100 -o "$tmp/p_none.mtx" --truth "$tmp/no/such/dir/t.txt"
if [ ! -e "$tmp/p_none.mtx" ]; then ok; else bad "gen left $tmp/p_none.mtx after failing"; fi
# abc labels: --labels writes the dictionary; abc -> mtx -> (dims) keeps the label count
expect_rc 0 "$dsmm" convert "$data/collins2007.txt.gz" "$tmp/collins.mtx" --labels "$tmp/labels.txt"
if [ "$(wc -l <"$tmp/labels.txt")" -eq 1622 ] && [ "$(head -1 "$tmp/labels.txt")" = YAL001C ]; then
    ok
else
    bad "labels file"
fi
expect_rc 1 "$dsmm" convert "$data/cora.adj.mtx.gz" "$tmp/cora.mtx" --labels "$tmp/l2.txt"
expect_grep "$tmp/err" "has no labels"
if [ -e "$tmp/cora.mtx" ] || [ -e "$tmp/l2.txt" ]; then bad "failed --labels left files"; else ok; fi
expect_rc 1 "$dsmm" convert "$data/p2p-Gnutella08.edgelist.gz" "$tmp/dir.mtx" --symmetric yes
expect_grep "$tmp/err" '^dsmm convert: DSMM_ERR_ARG: .*not symmetric'
if [ -e "$tmp/dir.mtx" ]; then bad "--symmetric yes failure left OUT"; else ok; fi
expect_rc 0 "$dsmm" convert "$data/cora.adj.mtx.gz" "$tmp/cora-gen.mtx" --symmetric no
expect_grep "$tmp/cora-gen.mtx" '^%%MatrixMarket matrix coordinate pattern general$'
expect_grep "$tmp/cora-gen.mtx" '^2708 2708 10556$'
expect_rc 0 "$dsmm" convert "$data/hep-th.mtx.gz" "$tmp/hep.x" --to bin
expect_rc 0 "$dsmm" info "$tmp/hep.x"
expect_grep "$tmp/out" '^format: +bin$'
expect_grep "$tmp/out" '^nnz: +31502$'

# --- --stats JSON with the stable keys ----------------------------------------------------------
expect_rc 0 "$dsmm" gen rmat --scale 8 -o "$tmp/st.mtx" --stats "$tmp/gen.json" --threads 2
expect_rc 0 "$dsmm" convert "$tmp/st.mtx" "$tmp/st.bin" --stats "$tmp/convert.json"
expect_rc 0 "$dsmm" info "$tmp/st.bin" --stats "$tmp/info.json"
# --stats -: the text report goes to stderr and stdout is the one record; --json with it is a
# usage error (two JSON documents on stdout)
expect_rc 0 "$dsmm" info "$tmp/st.bin" --stats -
if python3 -c 'import json, sys; sys.exit(json.load(open(sys.argv[1]))["op"] != "info")' "$tmp/out"; then ok; else bad "info --stats -: $(head -c 300 "$tmp/out")"; fi
expect_grep "$tmp/err" '^dims: +256 x 256$'
usage_case "dsmm info: --json and --stats - cannot both use stdout" info --json --stats - "$tmp/st.bin"
for op in gen convert info; do
    if python3 - "$tmp/$op.json" "$op" <<'EOF'; then ok; else bad "--stats $op: $(cat "$tmp/$op.json")"; fi
import json, sys
d = json.load(open(sys.argv[1]))
keys = ["op", "algo", "ranks", "threads", "seconds", "io_seconds", "flops", "nnz_in", "nnz_out",
        "peak_bytes", "bytes_sent"]
assert list(d)[:len(keys)] == keys, list(d)
assert d["op"] == sys.argv[2]
assert d["ranks"] == 1 and d["threads"] >= 1
assert d["seconds"] >= d["io_seconds"] >= 0 or sys.argv[2] == "convert"
assert d["peak_bytes"] > 0
if sys.argv[2] == "gen": assert d["nnz_in"] == 0 and d["nnz_out"] > 0 and d["threads"] == 2
if sys.argv[2] == "convert": assert d["nnz_in"] == d["nnz_out"] > 0
if sys.argv[2] == "info": assert d["nnz_in"] > 0
EOF
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
