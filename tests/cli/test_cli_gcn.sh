#!/bin/bash
# tests/cli/test_cli_gcn.sh: `dsmm gcn` as a user runs it: Cora on one process and under
# mpirun -n 4 (test accuracy >= 0.79, the per-epoch lines, the volume table, the same final
# accuracies at both), --stats JSON (stable keys, accuracies, the curve, the volume per rank),
# one-hot features and another aggregation algorithm, and bad input: exit 2 for usage errors,
# 1 for a missing or broken dataset with a message naming the file, no statistics file left.
# usage: test_cli_gcn.sh DSMM_BINARY DATA_DIR [unused]
set -u
dsmm=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
data=$(cd "$2" && pwd)
. "$(dirname "$0")/lib.sh"
cora=$data/cora
cd "$tmp" || exit 1

# acc_at_least FILE MIN: the "final: ... test accuracy X" line of FILE has X >= MIN.
acc_at_least() {
    local x
    x=$(sed -n 's/^final: .*test accuracy \([0-9.]*\).*/\1/p' "$1" | head -1)
    if [ -n "$x" ] && python3 -c "import sys; sys.exit(0 if float('$x') >= $2 else 1)"; then
        ok
    else
        bad "$1: test accuracy '${x}' < $2: $(head -c 400 "$1")"
    fi
}

# --- help -------------------------------------------------------------------------------------
expect_rc 0 "$dsmm" gcn --help
expect_grep "$tmp/out" '^usage: dsmm gcn --dataset PREFIX'
expect_grep "$tmp/out" 'cola-nofusion'
expect_rc 0 "$dsmm" --help
expect_grep "$tmp/out" '^  gcn '
# --gpu without CUDA (or without a device): a clear failure before any training
if ! "$dsmm" --version | grep -q '^CUDA: yes'; then
    for o in --gpu --gpu-resident; do
        expect_rc 1 "$dsmm" gcn --dataset "$cora" $o --stats nogpu.json
        expect_grep "$tmp/err" "without CUDA"
        expect_none nogpu.json
    done
fi

# --- Cora, one process ------------------------------------------------------------------------
expect_rc 0 "$dsmm" gcn --dataset "$cora" --stats one.json
cp "$tmp/out" one.out
acc_at_least one.out 0.79
expect_grep one.out '^ +epoch +loss +train +val +test'
expect_grep one.out '^ +200 +[0-9.]+ '
expect_grep one.out '2708 nodes, 10556 edges, 1433 features, 7 classes'
expect_grep one.out '^aggregation volume per multiply at k = 16'
expect_grep one.out '^ +rank +rows +LSC nnz +RSC nnz +RSC cols +V_CG +V_FR +V_FC'
expect_grep one.out '^ +0 +2708 '
if python3 - one.json >"$tmp/pyerr" 2>&1 <<'EOF'; then ok; else bad "one.json: $(head -c 400 "$tmp/pyerr")"; fi
import json, sys
s = json.load(open(sys.argv[1]))
for k in ("op", "algo", "ranks", "threads", "seconds", "io_seconds", "bytes_sent", "peak_bytes",
          "train_accuracy", "val_accuracy", "test_accuracy", "epochs", "agg_seconds",
          "comm_seconds", "dense_seconds", "curve", "volume"):
    assert k in s, k
assert s["op"] == "gcn" and s["algo"] == "cola" and s["ranks"] == 1, s
assert s["epochs"] == 200 and s["test_accuracy"] >= 0.79, s["test_accuracy"]
assert len(s["curve"]["loss"]) == 200 and len(s["curve"]["test_accuracy"]) == 200
assert s["curve"]["test_accuracy"][-1] == s["test_accuracy"]
assert s["curve"]["loss"][-1] < s["curve"]["loss"][0]
assert s["volume"]["rows"] == [2708], s["volume"]
assert list(s)[:11] == ["op", "algo", "ranks", "threads", "seconds", "io_seconds", "flops", "nnz_in",
                        "nnz_out", "peak_bytes", "bytes_sent"], list(s)[:11]
assert s["nnz_in"] == 10556 and s["flops"] > 0, s  # test_gcn checks the count itself
open("one.flops", "w").write(repr(s["flops"]))
EOF

# --- Cora, 4 ranks: the same network, the volume of every rank -------------------------------
if "$dsmm" --version | grep -q "MPI: yes" && mpi_found; then
    mpi_launcher
    expect_rc 0 "${mpi[@]}" -n 4 "$dsmm" gcn --dataset "$cora" --stats four.json
    cp "$tmp/out" four.out
    acc_at_least four.out 0.79
    expect_grep four.out 'on 4 ranks \(cola\)'
    for r in 0 1 2 3; do expect_grep four.out "^ +$r +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ "; done
    expect_grep four.out '^ +total +2708 '
    # Up to the order of float sums, 4 ranks train the network one rank trains.
    if [ "$(grep '^final:' one.out | sed 's/; training.*//')" = "$(grep '^final:' four.out | sed 's/; training.*//')" ]; then
        ok
    else
        bad "final accuracies differ: $(grep '^final:' one.out) / $(grep '^final:' four.out)"
    fi
    if python3 - four.json >"$tmp/pyerr" 2>&1 <<'EOF'; then ok; else bad "four.json: $(head -c 400 "$tmp/pyerr")"; fi
import json, sys
s = json.load(open(sys.argv[1]))
assert s["ranks"] == 4 and s["test_accuracy"] >= 0.79, s
v = s["volume"]
assert sum(v["rows"]) == 2708 and len(v["rows"]) == 4, v
for i in range(4):
    assert v["v_cg"][i] == 4 * 16 * (2708 - v["rows"][i]), v
    assert v["v_fr"][i] == 4 * 16 * v["rsc_nnz"][i], v
    assert v["v_fc"][i] == 4 * 16 * v["rsc_cols"][i] and v["v_fc"][i] <= v["v_fr"][i], v
assert s["bytes_sent"] > 0
assert s["flops"] == float(open("one.flops").read()) and s["nnz_in"] == 10556, s["flops"]
EOF
    expect_rc 0 "${mpi[@]}" -n 2 "$dsmm" gcn --dataset "$cora" --algo cola-nofusion --comm neighbor --epochs 30 -q
    expect_grep "$tmp/out" '^final: '
    expect_rc 1 "${mpi[@]}" -n 2 "$dsmm" gcn --dataset "$tmp/nothing" --stats mp.json
    expect_grep "$tmp/err" 'nothing.adj.mtx.gz'
    expect_none mp.json
else
    echo "no MPI or no mpirun: multi-rank cases skipped"
fi

# --- other features and algorithms, stats to stdout ------------------------------------------
expect_rc 0 "$dsmm" gcn --dataset "$cora" --features onehot --epochs 20 --verbose
expect_grep "$tmp/out" '^ +20 +[0-9.]+ '
expect_grep "$tmp/out" '2708 features'
expect_rc 0 "$dsmm" gcn --dataset "$cora" --algo bcast-1d --epochs 5 --stats -
expect_grep "$tmp/out" '"op": ?"gcn"'
expect_grep "$tmp/out" '"algo": ?"bcast-1d"'
expect_grep "$tmp/err" '^final: '

# --- bad input ----------------------------------------------------------------------------------
expect_rc 2 "$dsmm" gcn
expect_grep "$tmp/err" 'needs --dataset'
expect_rc 2 "$dsmm" gcn --dataset "$cora" --bogus
expect_grep "$tmp/err" "unknown option '--bogus'"
expect_rc 2 "$dsmm" gcn --dataset "$cora" --algo summa
expect_grep "$tmp/err" '--algo'
expect_rc 2 "$dsmm" gcn --dataset "$cora" --reorder metis
expect_rc 2 "$dsmm" gcn --dataset "$cora" --comm smoke
expect_rc 2 "$dsmm" gcn --dataset "$cora" --features pictures
expect_rc 2 "$dsmm" gcn --dataset "$cora" --dropout 1.5
expect_rc 2 "$dsmm" gcn --dataset "$cora" --layers 0
expect_rc 2 "$dsmm" gcn --dataset "$cora" --epochs many
expect_rc 2 "$dsmm" gcn --dataset "$cora" extra-argument
expect_rc 1 "$dsmm" gcn --dataset "$tmp/nothing" --stats missing.json
expect_grep "$tmp/err" '^dsmm gcn: .*nothing.adj.mtx.gz'
expect_none missing.json
# A broken labels file: the file and line named, nothing written.
for f in adj.mtx features.mtx split.txt; do cp "$cora.$f.gz" "broken.$f.gz"; done
zcat "$cora.labels.txt.gz" | sed '5s/.*/9x/' | gzip >broken.labels.txt.gz
expect_rc 1 "$dsmm" gcn --dataset broken --stats broken.json
expect_grep "$tmp/err" 'broken.labels.txt.gz:5:'
expect_none broken.json
# OpenBLAS is loaded when the GCN starts: a library that is not there, or is not OpenBLAS,
# is named and nothing is written (DSMM_OPENBLAS overrides the library found at build time).
expect_rc 1 env DSMM_OPENBLAS=/nonexistent/libopenblas.so.0 "$dsmm" gcn --dataset "$cora" --stats nob.json
expect_grep "$tmp/err" 'OpenBLAS could not be loaded.*/nonexistent/libopenblas.so.0'
expect_none nob.json
zlib=$(ldd "$dsmm" | awk '/libz\.so/ {print $3}')
if [ -n "$zlib" ]; then
    expect_rc 1 env DSMM_OPENBLAS="$zlib" "$dsmm" gcn --dataset "$cora" --stats noc.json
    expect_grep "$tmp/err" 'lacks cblas_sgemm'
    expect_none noc.json
fi
expect_rc 1 "$dsmm" gcn --dataset "$cora" --stats /nonexistent/dir/s.json
expect_grep "$tmp/err" '--stats'

echo "test_cli_gcn: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
