#!/bin/bash
# tests/cli/test_cli_spgemm.sh: `dsmm spgemm` and the nnz(A*A) lines of `dsmm info` as a user runs
# them: products of tests/data files and of random rectangular matrices against a naive Python
# reference (every kernel, every semiring, --mask, --transpose-b, --unsorted, --type, 1 and 2
# threads), nnz(A*A) against the numbers of tests/data/README.md, the --stats JSON keys, and bad
# input (missing file, mismatched dims, bad names, wrong mask, -o in a missing directory): the
# right exit code, a message naming the problem, and no output file.
# usage: test_cli_spgemm.sh DSMM_BINARY DATA_DIR [TEST_BADINPUT_BINARY (unused)]
set -u
dsmm=$1
data=$2
. "$(dirname "$0")/lib.sh"

seed=${DSMM_TEST_SEED:-$(($(date +%s) ^ ($$ << 20)))}
echo "seed $seed (replay with DSMM_TEST_SEED=$seed)"

# The naive reference: Matrix Market reader (coordinate; real/integer/pattern;
# general/symmetric/skew; .gz), random matrices, and row-by-row products on dicts.
cat >"$tmp/mm.py" <<'EOF'
import gzip, random, sys

def read(path):
    f = gzip.open(path, "rt") if path.endswith(".gz") else open(path)
    head = f.readline().split()
    field, sym = head[3], head[4]
    line = f.readline()
    while line.startswith("%"):
        line = f.readline()
    n, m, _ = map(int, line.split())
    rows = [dict() for _ in range(n)]
    for line in f:
        t = line.split()
        if not t:
            continue
        i, j = int(t[0]) - 1, int(t[1]) - 1
        v = 1.0 if field == "pattern" else float(t[2])
        rows[i][j] = v
        if sym != "general" and i != j:
            rows[j][i] = -v if sym == "skew-symmetric" else v
    return n, m, rows, field

def write(path, n, m, rows, pattern):
    with open(path, "w") as f:
        f.write("%%%%MatrixMarket matrix coordinate %s general\n" % ("pattern" if pattern else "real"))
        f.write("%d %d %d\n" % (n, m, sum(len(r) for r in rows)))
        for i, r in enumerate(rows):
            for j in sorted(r):
                f.write("%d %d\n" % (i + 1, j + 1) if pattern else "%d %d %.17g\n" % (i + 1, j + 1, r[j]))

def transpose(m, rows):
    t = [dict() for _ in range(m)]
    for i, r in enumerate(rows):
        for j, v in r.items():
            t[j][i] = v
    return t

def product(A, B, sr, M=None):
    add = {"plus-times": lambda x, y: x + y, "plus-pair": lambda x, y: x + y,
           "min-plus": min, "max-times": max}[sr]
    mul = {"plus-times": lambda x, y: x * y, "plus-pair": lambda x, y: 1.0,
           "min-plus": lambda x, y: x + y, "max-times": lambda x, y: x * y}[sr]
    C = []
    for i, r in enumerate(A):
        acc = {}
        keep = M[i] if M is not None else None
        for k, a in r.items():
            for j, b in B[k].items():
                if keep is not None and j not in keep:
                    continue
                p = mul(a, b)
                acc[j] = add(acc[j], p) if j in acc else p
        C.append(acc)
    return C

def close(x, y):
    return abs(x - y) <= 1e-12 * max(abs(x), abs(y)) + 1e-10  # sums may cancel

def compare(name, want, got, pattern):
    if len(want) != len(got):
        return "%s: %d rows, want %d" % (name, len(got), len(want))
    for i, (w, g) in enumerate(zip(want, got)):
        if set(w) != set(g):
            extra, missing = sorted(set(g) - set(w))[:3], sorted(set(w) - set(g))[:3]
            return "%s: row %d: extra columns %s, missing %s" % (name, i + 1, extra, missing)
        if not pattern:
            for j in w:
                if not close(w[j], g[j]):
                    return "%s: (%d, %d) = %r, want %r" % (name, i + 1, j + 1, g[j], w[j])
    return None

cmd = sys.argv[1]
if cmd == "gen":  # gen PATH NROWS NCOLS DENSITY SEED [pattern]: random, row 0 and column 0 empty
    path, n, m, d, seed = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])
    rng = random.Random(seed)
    rows = [{j: rng.choice([-1, 1]) * rng.uniform(0.1, 10) for j in range(1, m) if rng.random() < d}
            if i > 0 else {} for i in range(n)]
    write(path, n, m, rows, len(sys.argv) > 7)
elif cmd == "check":  # check SEMIRING A B MASK|- TRANSPOSE(0|1) C...: each C equals A*B
    sr, pa, pb, pm, tb = sys.argv[2:7]
    na, ma, A, fa = read(pa)
    nb, mb, B, fb = read(pb)
    if tb == "1":
        nb, mb, B = mb, nb, transpose(mb, B)
    M = read(pm)[2] if pm != "-" else None
    want = product(A, B, sr, M)
    errors = []
    for pc in sys.argv[7:]:
        nc, mc, C, fc = read(pc)
        if (nc, mc) != (na, mb):
            errors.append("%s: %d x %d, want %d x %d" % (pc, nc, mc, na, mb))
            continue
        e = compare(pc, want, C, fc == "pattern")
        if e:
            errors.append(e)
    if errors:
        print("\n".join(errors))
        sys.exit(1)
elif cmd == "checkabc":  # checkabc A.abc[.gz] C.abc: C = A*A (plus-times) on labels
    f = gzip.open(sys.argv[2], "rt") if sys.argv[2].endswith(".gz") else open(sys.argv[2])
    A = {}
    for line in f:
        t = line.split()
        A.setdefault(t[0], {})[t[1]] = float(t[2])
    want = {}
    for a, r in A.items():
        for b, x in r.items():
            for c, y in A.get(b, {}).items():
                want[(a, c)] = want.get((a, c), 0.0) + x * y
    got = {}
    for line in open(sys.argv[3]):
        t = line.split()
        got[(t[0], t[1])] = float(t[2])
    if set(got) != set(want):
        print("abc: %d pairs, want %d; extra %s missing %s" % (len(got), len(want),
              sorted(set(got) - set(want))[:2], sorted(set(want) - set(got))[:2]))
        sys.exit(1)
    bad = [k for k in want if not close(want[k], got[k])]
    if bad:
        print("abc: %s = %r, want %r" % (bad[0], got[bad[0]], want[bad[0]]))
        sys.exit(1)
EOF
mm() { python3 "$tmp/mm.py" "$@"; }

# check_product SEMIRING A B MASK|- TRANSPOSE C...: the C files equal the reference product.
check_product() {
    local what="check_product $*"
    if mm check "$@" >"$tmp/check.log" 2>&1; then ok; else bad "$what: $(head -c 400 "$tmp/check.log")"; fi
}

kernels="auto hash heap dense ref"
semirings="plus-times plus-pair min-plus max-times"
hep=$data/hep-th.mtx.gz

# --- help and registration ---------------------------------------------------------------------
expect_rc 0 "$dsmm" --help
expect_grep "$tmp/out" '^ +spgemm '
expect_rc 0 "$dsmm" help spgemm
expect_grep "$tmp/out" '^usage: dsmm spgemm A \[B\] -o C'
expect_grep "$tmp/out" '--kernel auto\|hash\|heap\|dense\|ref\|gpu'
expect_grep "$tmp/out" '--semiring auto\|plus-times\|plus-pair\|min-plus\|max-times'
cp "$tmp/out" "$tmp/help1"
expect_rc 0 "$dsmm" spgemm --help
if cmp -s "$tmp/out" "$tmp/help1"; then ok; else bad "'dsmm help spgemm' differs from 'spgemm --help'"; fi

# --- hep-th A*A: nnz from tests/data/README.md, values against the reference ---------------------
expect_rc 0 "$dsmm" spgemm "$hep" -o "$tmp/hep2.mtx"
expect_grep "$tmp/out" '^nnz\(C\): +171460$'
expect_grep "$tmp/out" '^flops: +273668$'
expect_grep "$tmp/out" '^cf: +1\.596$'
expect_grep "$tmp/out" '^semiring: +plus-times \(auto: A holds values\)$'
expect_grep "$tmp/out" '^kernel mix: +hash [0-9]+  heap [0-9]+  dense [0-9]+  masked [0-9]+ rows$'
expect_rc 0 "$dsmm" info "$tmp/hep2.mtx"
expect_grep "$tmp/out" '^nnz: +171460$'
expect_grep "$tmp/out" '^dims: +8361 x 8361$'
expect_grep "$tmp/out" '^numeric symmetric: +yes$'
outs=()
for k in $kernels; do
    for t in 1 2; do
        expect_rc 0 "$dsmm" spgemm "$hep" -o "$tmp/hep-$k-$t.mtx" --kernel $k --threads $t -q
        if [ -s "$tmp/out" ]; then bad "--quiet printed: $(head -c 200 "$tmp/out")"; else ok; fi
        outs+=("$tmp/hep-$k-$t.mtx")
    done
done
check_product plus-times "$hep" "$hep" - 0 "$tmp/hep2.mtx" "${outs[@]}"

# every semiring with every kernel; rows unsorted too
for s in $semirings; do
    outs=()
    for k in $kernels; do
        expect_rc 0 "$dsmm" spgemm "$hep" -o "$tmp/hep-$s-$k.mtx" --semiring $s --kernel $k -t 2
        expect_grep "$tmp/out" "^semiring: +$s\$"
        outs+=("$tmp/hep-$s-$k.mtx")
    done
    expect_rc 0 "$dsmm" spgemm "$hep" -o "$tmp/hep-$s-unsorted.mtx" --semiring $s --unsorted
    outs+=("$tmp/hep-$s-unsorted.mtx")
    check_product $s "$hep" "$hep" - 0 "${outs[@]}"
done

# --- pattern input: auto semiring counts paths; plus-times needs values --------------------------
fe=$data/fe_4elt2.mtx.gz
expect_rc 0 "$dsmm" spgemm "$fe" -o "$tmp/fe2.mtx" --stats "$tmp/fe2.json"
expect_grep "$tmp/out" '^semiring: +plus-pair \(auto: A is pattern-only\)$'
expect_grep "$tmp/out" '^nnz\(C\): +212095$'
if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["semiring"] == "plus-pair" and d["semiring_asked"] == "auto" and d["nnz_out"] == 212095, d' "$tmp/fe2.json"; then ok; else bad "fe_4elt2 stats: $(cat "$tmp/fe2.json")"; fi
check_product plus-pair "$fe" "$fe" - 0 "$tmp/fe2.mtx"
expect_rc 1 "$dsmm" spgemm "$fe" -o "$tmp/fe-pt.mtx" --semiring plus-times
expect_grep "$tmp/err" '^dsmm spgemm: DSMM_ERR_ARG: .*plus-times needs values'
expect_none "$tmp/fe-pt.mtx"
# --type pattern drops values; --type float keeps them (to float precision)
expect_rc 0 "$dsmm" spgemm "$hep" -o "$tmp/hep-pat.mtx" --type pattern
expect_grep "$tmp/hep-pat.mtx" '^%%MatrixMarket matrix coordinate pattern '
check_product plus-times "$hep" "$hep" - 0 "$tmp/hep-pat.mtx"
expect_rc 0 "$dsmm" spgemm "$hep" -o "$tmp/hep-float.mtx" --type float
expect_grep "$tmp/out" '^C: .*nnz 171460, float, '
# nnz(A*A) of the other bundled matrices (tests/data/README.md; 0: not listed there)
for case in bcsstk13.mtx.gz:396773 cora.adj.mtx.gz:0 citeseer.adj.mtx.gz:0; do
    f=${case%%:*}
    want=${case##*:}
    expect_rc 0 "$dsmm" spgemm "$data/$f" -o "$tmp/sq.mtx" -t 2 --semiring plus-pair
    if [ "$want" != 0 ]; then expect_grep "$tmp/out" "^nnz\\(C\\): +$want\$"; fi
    check_product plus-pair "$data/$f" "$data/$f" - 0 "$tmp/sq.mtx"
done

# the demo's network: cf 6.5 (tests/data/README.md)
expect_rc 0 "$dsmm" spgemm "$data/facebook-combined.mtx.gz" --stats "$tmp/fb.json" -t 2
expect_grep "$tmp/out" '^nnz\(C\): +2896485$'
expect_grep "$tmp/out" '^cf: +6\.493$'
expect_grep "$tmp/out" '^C: +not written \('

# --- random rectangular matrices (row 0 and column 0 empty): every kernel, 1 and 2 threads --------
mm gen "$tmp/r1.mtx" 41 30 0.15 $((seed + 1))
mm gen "$tmp/r2.mtx" 30 52 0.2 $((seed + 2))
mm gen "$tmp/r3.mtx" 52 30 0.2 $((seed + 3))
mm gen "$tmp/m1.mtx" 41 52 0.3 $((seed + 4)) pattern
mm gen "$tmp/p2.mtx" 30 52 0.2 $((seed + 5)) pattern
for s in $semirings; do
    outs=()
    touts=()
    mouts=()
    for k in $kernels; do
        for t in 1 2; do
            expect_rc 0 "$dsmm" spgemm "$tmp/r1.mtx" "$tmp/r2.mtx" -o "$tmp/r-$s-$k-$t.mtx" \
                --semiring $s --kernel $k -t $t
            outs+=("$tmp/r-$s-$k-$t.mtx")
            expect_rc 0 "$dsmm" spgemm "$tmp/r1.mtx" "$tmp/r3.mtx" -o "$tmp/rt-$s-$k-$t.mtx" \
                --transpose-b --semiring $s --kernel $k -t $t
            touts+=("$tmp/rt-$s-$k-$t.mtx")
            expect_rc 0 "$dsmm" spgemm "$tmp/r1.mtx" "$tmp/r2.mtx" -o "$tmp/rm-$s-$k-$t.mtx" \
                --mask "$tmp/m1.mtx" --semiring $s --kernel $k -t $t
            mouts+=("$tmp/rm-$s-$k-$t.mtx")
        done
    done
    check_product $s "$tmp/r1.mtx" "$tmp/r2.mtx" - 0 "${outs[@]}"
    check_product $s "$tmp/r1.mtx" "$tmp/r3.mtx" - 1 "${touts[@]}"
    check_product $s "$tmp/r1.mtx" "$tmp/r2.mtx" "$tmp/m1.mtx" 0 "${mouts[@]}"
done
# --- out of core: every panel count gives the reference product; the plan in the summary --------
oouts=()
for s in plus-times min-plus; do
    for rp in "1 1" "3 2" "41 1" "1 52" "5 7"; do
        set -- $rp
        expect_rc 0 "$dsmm" spgemm "$tmp/r1.mtx" "$tmp/r2.mtx" -o "$tmp/o-$s-$1-$2.mtx" \
            --semiring $s --row-panels $1 --col-panels $2 -t 2
        expect_grep "$tmp/out" "^out of core: +$1 x $2 panels, "
        oouts+=("$tmp/o-$s-$1-$2.mtx")
    done
    check_product $s "$tmp/r1.mtx" "$tmp/r2.mtx" - 0 "${oouts[@]}"
    oouts=()
    expect_rc 0 "$dsmm" spgemm "$tmp/r1.mtx" "$tmp/r3.mtx" -o "$tmp/ot-$s.mtx" --transpose-b \
        --semiring $s --row-panels 4 --col-panels 3
    check_product $s "$tmp/r1.mtx" "$tmp/r3.mtx" - 1 "$tmp/ot-$s.mtx"
done
# a budget: hep-th's A*A in chunks equals the in-core file byte for byte; the plan in --stats
expect_rc 0 "$dsmm" spgemm "$hep" -o "$tmp/hin.mtx" --kernel hash
for est in cohen exact; do
    expect_rc 0 "$dsmm" spgemm "$hep" -o "$tmp/hooc-$est.mtx" --kernel hash --ooc-mem 512K \
        --ooc-estimate $est --stats "$tmp/hooc.json"
    if cmp -s "$tmp/hin.mtx" "$tmp/hooc-$est.mtx"; then ok; else bad "hep-th --ooc-mem 512K ($est) differs from in core"; fi
    expect_grep "$tmp/out" '^out of core: +[0-9]+ x [0-9]+ panels, [0-9]+ chunks \(0 on the device, 0 split\), budget 0\.5 MiB$'
    python3 - "$tmp/hooc.json" <<'PY' && ok || bad "hep-th --ooc --stats: wrong plan keys"
import json, sys
s = json.load(open(sys.argv[1]))
n = s["ooc_chunks"]
assert s["ooc"] == 1 and n >= 2 and s["ooc_mem_bytes"] == 524288
assert s["ooc_max_est_bytes"] <= 524288
assert sum(s["ooc_chunk_%d_nnz" % i] for i in range(n)) == s["nnz_out"] == 171460
assert sum(s["ooc_chunk_%d_flops" % i] for i in range(n)) == s["flops"]
fl = [s["ooc_chunk_%d_flops" % i] for i in range(n)]
assert fl == sorted(fl, reverse=True), fl
PY
done
expect_rc 0 "$dsmm" spgemm "$hep" -o "$tmp/hooc1.mtx" --kernel hash --ooc
if cmp -s "$tmp/hin.mtx" "$tmp/hooc1.mtx"; then ok; else bad "hep-th --ooc differs from in core"; fi
expect_grep "$tmp/out" '^out of core: +1 x 1 panels, 1 chunks'
# bad out-of-core options: the reason, no output
expect_rc 1 "$dsmm" spgemm "$hep" -o "$tmp/f2.mtx" --ooc-mem 100 --stats "$tmp/f2.json"
expect_grep "$tmp/err" "^dsmm spgemm: DSMM_ERR_NOMEM: ooc: a budget of 100 bytes cannot hold"
expect_rc 1 "$dsmm" spgemm "$hep" -o "$tmp/f2.mtx" --ooc-mem 70K
expect_grep "$tmp/err" "^dsmm spgemm: DSMM_ERR_NOMEM: ooc: row [0-9]+ of A alone needs"
expect_rc 2 "$dsmm" spgemm "$hep" -o "$tmp/f2.mtx" --hybrid
expect_grep "$tmp/err" '^dsmm spgemm: --hybrid needs --gpu'
expect_rc 2 "$dsmm" spgemm "$hep" -o "$tmp/f2.mtx" --gpu-ratio 0.5
expect_grep "$tmp/err" '^dsmm spgemm: --gpu-ratio needs --hybrid'
expect_rc 2 "$dsmm" spgemm "$hep" -o "$tmp/f2.mtx" --gpu --hybrid --gpu-ratio 1.5
expect_grep "$tmp/err" "^dsmm spgemm: --gpu-ratio: '1.5' is neither"
# --gpu-min-flops: a number >= 0 (a usage error names it), and it implies --gpu
expect_rc 2 "$dsmm" spgemm "$hep" -o "$tmp/f2.mtx" --gpu-min-flops abc
expect_grep "$tmp/err" "^dsmm spgemm: --gpu-min-flops: 'abc' is not a number"
expect_rc 2 "$dsmm" spgemm "$hep" -o "$tmp/f2.mtx" --gpu-min-flops -1
expect_grep "$tmp/err" '^dsmm spgemm: --gpu-min-flops: -1 is out of range'
expect_none "$tmp/f2.mtx"
expect_rc 2 "$dsmm" spgemm "$hep" -o "$tmp/f2.mtx" --ooc --mask "$hep"
expect_grep "$tmp/err" '^dsmm spgemm: out of core .* does not take --mask'
expect_rc 2 "$dsmm" spgemm "$hep" -o "$tmp/f2.mtx" --ooc-estimate guess
expect_grep "$tmp/err" "^dsmm spgemm: --ooc-estimate: 'guess' is not one of auto|cohen|exact"
expect_rc 1 "$dsmm" spgemm "$hep" -o "$tmp/f2.mtx" --row-panels 9000
expect_grep "$tmp/err" '^dsmm spgemm: DSMM_ERR_ARG: spgemm ooc: 9000 row panels for 8361 rows'
expect_none "$tmp/f2.mtx" "$tmp/f2.json"
expect_rc 0 "$dsmm" spgemm "$tmp/r1.mtx" "$tmp/r2.mtx" -o "$tmp/r12.mtx"
expect_grep "$tmp/out" '^C: .*\(41 x 52, '
expect_grep "$tmp/out" '^B: .*r2\.mtx \(30 x 52, '
# real A times pattern B: auto gives plus-pair
expect_rc 0 "$dsmm" spgemm "$tmp/r1.mtx" "$tmp/p2.mtx" -o "$tmp/rp.mtx"
expect_grep "$tmp/out" '^semiring: +plus-pair \(auto: B is pattern-only\)$'
check_product plus-pair "$tmp/r1.mtx" "$tmp/p2.mtx" - 0 "$tmp/rp.mtx"

# triangle count through the mask: sum(A .* (A*A)) = 6 * triangles; the masked product of a
# symmetric pattern with itself, compared with the reference
expect_rc 0 "$dsmm" spgemm "$data/cora.adj.mtx.gz" --mask "$data/cora.adj.mtx.gz" -o "$tmp/tri.mtx"
check_product plus-pair "$data/cora.adj.mtx.gz" "$data/cora.adj.mtx.gz" "$data/cora.adj.mtx.gz" 0 \
    "$tmp/tri.mtx"

# abc input: A*A keeps the labels of A (abc lists pairs only, so labels without an entry in C
# are not in the output)
expect_rc 0 "$dsmm" spgemm "$data/collins2007.txt.gz" -o "$tmp/collins2.abc"
expect_grep "$tmp/out" '^A: .*\(1622 x 1622, nnz 9074, double\)$'
if mm checkabc "$data/collins2007.txt.gz" "$tmp/collins2.abc" >"$tmp/check.log" 2>&1; then ok; else
    bad "collins A*A on labels: $(head -c 300 "$tmp/check.log")"
fi

# C (32-bit columns inside) in the binary format: back to Matrix Market, same product
expect_rc 0 "$dsmm" spgemm "$tmp/r1.mtx" "$tmp/r2.mtx" -o "$tmp/r12.dsmm"
expect_rc 0 "$dsmm" convert "$tmp/r12.dsmm" "$tmp/r12b.mtx"
check_product plus-times "$tmp/r1.mtx" "$tmp/r2.mtx" - 0 "$tmp/r12b.mtx"

# -o - writes C to stdout and the summary to stderr
expect_rc 0 "$dsmm" spgemm "$tmp/r1.mtx" "$tmp/r2.mtx" -o -
expect_grep "$tmp/out" '^%%MatrixMarket matrix coordinate real general$'
expect_grep "$tmp/err" '^nnz\(C\): +[0-9]+$'

# --- --stats JSON: stable keys first, then the SpGEMM details -----------------------------------
expect_rc 0 "$dsmm" spgemm "$hep" --stats "$tmp/st.json" -t 2 --kernel hash
if [ ! -e "$tmp/st.json" ]; then bad "--stats wrote nothing"; fi
expect_rc 0 "$dsmm" spgemm "$hep" -o "$tmp/st.mtx" --stats "$tmp/st2.json" --estimate --mask "$hep"
for j in st st2; do
    if python3 - "$tmp/$j.json" $j <<'EOF'; then ok; else bad "--stats $j: $(cat "$tmp/$j.json")"; fi
import json, sys
d = json.load(open(sys.argv[1]))
keys = ["op", "algo", "ranks", "threads", "seconds", "io_seconds", "flops", "nnz_in", "nnz_out",
        "peak_bytes", "bytes_sent"]
assert list(d)[:len(keys)] == keys, list(d)
for k in ["cf", "seconds_symbolic", "seconds_numeric", "rows_hash", "rows_heap", "rows_dense",
          "rows_masked", "semiring", "sorted"]:
    assert k in d, k
assert d["op"] == "spgemm" and d["ranks"] == 1
assert d["flops"] == 273668 and d["nnz_in"] == 31502 and d["nnz_a"] == d["nnz_b"] == 31502, d
assert d["semiring"] == "plus-times" and d["semiring_asked"] == "auto" and d["sorted"] == 1, d
assert d["peak_bytes"] > 0 and d["seconds"] >= 0 and d["io_seconds"] > 0, d
assert d["rows_hash"] + d["rows_heap"] + d["rows_dense"] + d["rows_masked"] <= 8361, d
if sys.argv[2] == "st":
    assert d["algo"] == "hash" and d["threads"] == 2 and d["mask"] == 0, d
    assert d["nnz_out"] == 171460 and abs(d["cf"] - 273668 / 171460) < 1e-12, d
else:
    assert d["algo"] == "auto" and d["mask"] == 1 and d["nnz_out"] < 171460, d
EOF
done

# --- --estimate: Cohen's estimate of nnz(C), alone or beside the product ----------------------------
expect_rc 0 "$dsmm" spgemm "$hep" --estimate
expect_grep "$tmp/out" '^nnz\(C\) estimate: '
if grep -q '^nnz(C): ' "$tmp/out"; then bad "--estimate alone multiplied"; else ok; fi
# within 3 expected standard deviations (fixed seed: the same number every run)
if awk '/^nnz\(C\) estimate:/ { n = $3; e = $9; sub(/%,/, "", e); d = (n - 171460) / 171460;
        if (d < 0) d = -d; exit !(n > 0 && d <= 3 * e / 100 + 1e-9) }' "$tmp/out"; then ok; else
    bad "estimate far from 171460: $(grep estimate "$tmp/out")"
fi
expect_rc 0 "$dsmm" spgemm "$hep" -o "$tmp/e.mtx" --estimate
expect_grep "$tmp/out" '^estimate error: +[-+][0-9.]+%$'
expect_rc 0 "$dsmm" spgemm "$tmp/r1.mtx" "$tmp/r3.mtx" --transpose-b --estimate
expect_grep "$tmp/out" '^nnz\(C\) estimate: +[0-9]+ \(16 keys'

# --- dsmm info: nnz(A*A) estimated, and exactly with --exact ------------------------------------
for case in hep-th.mtx.gz:171460:273668 fe_4elt2.mtx.gz:212095:395450 \
    bcsstk13.mtx.gz:396773:4554541; do
    IFS=: read -r f nnz flops <<<"$case"
    expect_rc 0 "$dsmm" info "$data/$f" --exact
    expect_grep "$tmp/out" "^nnz\\(A\\*A\\): +$nnz\$"
    cf=$(awk -v a="$flops" -v b="$nnz" 'BEGIN { printf "%.4g", a / b }')
    expect_grep "$tmp/out" "^cf\\(A\\*A\\): +$cf\$"
    expect_grep "$tmp/out" '^nnz\(A\*A\) estimate: +[0-9]+ \(16 keys, expected relative error [0-9.]+%\)$'
    expect_grep "$tmp/out" '^cf\(A\*A\) estimate: +[0-9.e+]+$'
    expect_grep "$tmp/out" "^flops\\(A\\*A\\): +$flops\$"
    # the estimate repeats exactly (fixed seed), whatever the thread count
    grep '^nnz(A\*A) estimate' "$tmp/out" >"$tmp/est1"
    expect_rc 0 "$dsmm" info "$data/$f" -t 1
    grep '^nnz(A\*A) estimate' "$tmp/out" >"$tmp/est2"
    if cmp -s "$tmp/est1" "$tmp/est2"; then ok; else bad "$f: estimate differs between runs"; fi
    if grep -q '^nnz(A\*A): ' "$tmp/out"; then bad "exact count without --exact"; else ok; fi
done
expect_rc 0 "$dsmm" info "$tmp/r1.mtx" --exact
expect_grep "$tmp/out" '^nnz\(A\*A\) estimate: +n/a \(not square\)$'
expect_grep "$tmp/out" '^nnz\(A\*A\): +n/a \(not square\)$'
expect_rc 0 "$dsmm" info --json --exact "$hep"
if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["nnz_aa"] == 171460 and abs(d["cf_aa"] - 273668/171460) < 1e-12 and d["nnz_aa_estimate_keys"] == 16 and d["nnz_aa_estimate"] > 0 and 0 < d["nnz_aa_estimate_rel_err"] < 1, d' "$tmp/out"; then ok; else bad "info --json --exact: $(head -c 600 "$tmp/out")"; fi

# --- usage errors: exit 2, message, nothing written ---------------------------------------------
usage_case() { # substring, then the command line
    local sub=$1
    shift
    expect_rc 2 "$dsmm" "$@"
    expect_grep "$tmp/err" "$sub"
}
usage_case "dsmm spgemm: needs A" spgemm -o "$tmp/u.mtx"
usage_case "dsmm spgemm: needs -o C" spgemm "$hep"
usage_case "dsmm spgemm: --kernel: 'fast' is not one of auto\|hash" spgemm "$hep" -o "$tmp/u.mtx" --kernel fast
usage_case "dsmm spgemm: --semiring: 'max-plus' is not one of auto\|plus-times" spgemm "$hep" -o "$tmp/u.mtx" --semiring max-plus
usage_case "dsmm spgemm: --type: 'int' is not one of" spgemm "$hep" -o "$tmp/u.mtx" --type int
usage_case "dsmm spgemm: unexpected argument" spgemm "$hep" "$hep" "$hep" -o "$tmp/u.mtx"
usage_case "dsmm spgemm: unknown option '--mask-file'" spgemm "$hep" -o "$tmp/u.mtx" --mask-file x
usage_case "see 'dsmm spgemm --help'" spgemm "$hep" -o "$tmp/u.mtx" --threads 0
expect_none "$tmp/u.mtx"

# --- runtime failures: exit 1, the problem named, no output -------------------------------------
expect_rc 1 "$dsmm" spgemm "$tmp/missing.mtx" -o "$tmp/f1.mtx" --stats "$tmp/f1.json"
expect_grep "$tmp/err" '^dsmm spgemm: DSMM_ERR_IO: .*missing\.mtx'
expect_rc 1 "$dsmm" spgemm "$hep" "$tmp/missing-b.mtx" -o "$tmp/f1.mtx"
expect_grep "$tmp/err" '^dsmm spgemm: DSMM_ERR_IO: .*missing-b\.mtx'
expect_rc 1 "$dsmm" spgemm "$tmp/r1.mtx" "$tmp/r1.mtx" -o "$tmp/f1.mtx" --stats "$tmp/f1.json"
expect_grep "$tmp/err" '^dsmm spgemm: DSMM_ERR_DIM: .*41 x 30.*41 x 30'
expect_rc 1 "$dsmm" spgemm "$tmp/r1.mtx" "$tmp/r2.mtx" -o "$tmp/f1.mtx" --transpose-b
expect_grep "$tmp/err" '^dsmm spgemm: DSMM_ERR_DIM: '
expect_rc 1 "$dsmm" spgemm "$hep" "$data/cora.adj.mtx.gz" -o "$tmp/f1.mtx" --estimate
expect_grep "$tmp/err" '^dsmm spgemm: DSMM_ERR_DIM: '
expect_rc 1 "$dsmm" spgemm "$tmp/r1.mtx" "$tmp/r2.mtx" -o "$tmp/f1.mtx" --mask "$tmp/r1.mtx"
expect_grep "$tmp/err" '^dsmm spgemm: DSMM_ERR_DIM: .*mask is 41 x 30 but C is 41 x 52'
expect_rc 1 "$dsmm" spgemm "$hep" -o "$tmp/f1.mtx" --mask "$tmp/missing-m.mtx"
expect_grep "$tmp/err" '^dsmm spgemm: DSMM_ERR_IO: .*missing-m\.mtx'
expect_rc 1 "$dsmm" spgemm "$hep" -o "$tmp/no/such/dir/c.mtx"
expect_grep "$tmp/err" "^dsmm spgemm: -o .*: directory '.*/no/such/dir' does not exist"
expect_rc 1 "$dsmm" spgemm "$hep" -o "$tmp/f1.mtx" --stats "$tmp/no/dir/s.json"
expect_grep "$tmp/err" "^dsmm spgemm: --stats .*: directory '.*/no/dir' does not exist"
expect_rc 1 "$dsmm" spgemm "$hep" -o "$tmp/f1.mtx" --mem 100K
expect_grep "$tmp/err" '^dsmm spgemm: DSMM_ERR_NOMEM'
expect_none "$tmp/f1.mtx" "$tmp/f1.json"
if "$dsmm" --version | grep -q '^CUDA: no'; then
    expect_rc 1 "$dsmm" spgemm "$hep" -o "$tmp/f1.mtx" --kernel gpu
    expect_grep "$tmp/err" '^dsmm spgemm: --kernel gpu: this dsmm was built without CUDA'
    expect_none "$tmp/f1.mtx"
    expect_rc 1 "$dsmm" spgemm "$hep" -o "$tmp/f1.mtx" --kernel cusparse
    expect_grep "$tmp/err" '^dsmm spgemm: --kernel cusparse: this dsmm was built without CUDA'
    expect_rc 1 "$dsmm" spgemm "$hep" -o "$tmp/f1.mtx" --gpu-mem 1G --stats "$tmp/f1.json"
    expect_grep "$tmp/err" '^dsmm spgemm: --gpu: this dsmm was built without CUDA'
    expect_none "$tmp/f1.mtx" "$tmp/f1.json"
    expect_rc 1 "$dsmm" spgemm "$hep" -o "$tmp/f1.mtx" --gpu-min-flops 0
    expect_grep "$tmp/err" '^dsmm spgemm: --gpu: this dsmm was built without CUDA'
    expect_none "$tmp/f1.mtx"
else
    # a CUDA build on a machine without a device: the reason, no output
    if ! "$dsmm" --version | grep -q 'GPU: [^n]'; then
        expect_rc 1 "$dsmm" spgemm "$hep" -o "$tmp/f1.mtx" --gpu
        expect_grep "$tmp/err" 'DSMM_ERR_CUDA: gpu: no CUDA device'
        expect_none "$tmp/f1.mtx"
    fi
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
