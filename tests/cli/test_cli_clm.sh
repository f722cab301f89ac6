#!/bin/bash
# tests/cli/test_cli_clm.sh: `dsmm clm dist` and `dsmm clm info` (src/cli/cmd_clm.c) as a user
# runs them: two block clusterings of tests/data/collins2007 (1622 labels in order of first
# appearance, in blocks of 10 and of 15) with their distances worked out by hand and their
# clm info numbers as mcl 22-282 prints them; JSON, gzip, native mcl files; bad input (exit 1
# for runtime failures, 2 for usage, a message naming the problem). When mcl's clm and mcxload
# are on PATH, the same files are converted with mcxload and every number is compared with
# clm dist and clm info (otherwise "SKIP: clm not installed" for those checks only).
# usage: test_cli_clm.sh DSMM_BINARY DATA_DIR [TEST_BADINPUT_BINARY (unused)]
set -u
dsmm=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") # absolute: the checks run in $tmp
data=$(cd "$2" && pwd)
. "$(dirname "$0")/lib.sh"
collins=$data/collins2007.txt.gz
cora=$data/cora.adj.mtx.gz

# expect_same FILE1 FILE2: the same measures, numbers within 1.5e-5 (both print 5 decimals),
# names (n1=, n2=, src=) ignored.
expect_same() {
    if python3 - "$1" "$2" <<'EOF'; then ok; else bad "$1 and $2 differ: $(head -c 300 "$1") // $(head -c 300 "$2")"; fi
import re, sys
def fields(path):
    rows = []
    for line in open(path):
        line = line.strip()
        if not line or line == '===':
            continue
        kv = dict(re.findall(r'(\w+)=(\S+)', line))
        for k in ('n1', 'n2', 'src'):
            kv.pop(k, None)
        rows.append(kv)
    return rows
a, b = fields(sys.argv[1]), fields(sys.argv[2])
if len(a) != len(b) or not a:
    sys.exit(1)
for x, y in zip(a, b):
    if set(x) != set(y):
        sys.exit(1)
    for k in x:
        if abs(float(x[k]) - float(y[k])) > 1.5e-5:
            print(k, x[k], y[k], file=sys.stderr)
            sys.exit(1)
EOF
}

# --- help ----------------------------------------------------------------------------------
expect_rc 0 "$dsmm" clm --help
expect_grep "$tmp/out" '^usage: dsmm clm dist\|info'
expect_rc 0 "$dsmm" help clm
expect_grep "$tmp/out" 'dsmm clm info GRAPH'
expect_rc 0 "$dsmm" clm dist --help
expect_grep "$tmp/out" '^usage: dsmm clm dist A B'
expect_grep "$tmp/out" '--mode sj\|vi\|mk'
expect_rc 0 "$dsmm" clm info --help
expect_grep "$tmp/out" '^usage: dsmm clm info GRAPH CLUSTERS'
expect_rc 0 "$dsmm" --help
expect_grep "$tmp/out" '^ +clm '

# --- two clusterings of collins2007 ----------------------------------------------------------
zcat "$collins" | awk '{for (i = 1; i <= 2; i++) if (!($i in s)) { s[$i] = 1; print $i }}' >"$tmp/labels"
if [ "$(wc -l <"$tmp/labels")" -eq 1622 ]; then ok; else bad "collins2007: $(wc -l <"$tmp/labels") labels, want 1622"; fi
awk '{printf "%s%s", $0, (NR % 10 == 0 ? "\n" : "\t")} END {if (NR % 10) printf "\n"}' "$tmp/labels" >"$tmp/A.txt"
awk '{printf "%s%s", $0, (NR % 15 == 0 ? "\n" : " ")} END {if (NR % 15) printf "\n"}' "$tmp/labels" >"$tmp/B.txt"
cd "$tmp" || exit 1

# Per 30 labels A has clusters 10 10 10, B 15 15; the cells are 10 | 5 5 | 10. A to the meet:
# split the middle block (5), B: split 5 off each (10); 54 such groups and a last pair {x y}
# in both. So sj d1 = 54 * 5 = 270, d2 = 540; Mirkin per group: 300 - 250 = 50 and
# 450 - 250 = 200, so 2700 and 10800.
expect_rc 0 "$dsmm" clm dist A.txt B.txt
expect_grep out $'^d=810\td1=270\td2=540\tnn=1622\tc1=163\tc2=109\tn1=A.txt\tn2=B.txt$'
if [ -s err ]; then bad "stderr not empty: $(head -c 300 err)"; else ok; fi
expect_rc 0 "$dsmm" clm dist --mode mk A.txt B.txt
expect_grep out $'^d=13500\td1=2700\td2=10800\tnn=1622\tc1=163\tc2=109\t'
# VI per group of 30: d1 = H(B|A) = (sum |a| ln |a| - sum n_ab ln n_ab) / n adds
# 30 ln 10 - (20 ln 10 + 10 ln 5) = 10 ln 2, d2 adds 30 ln 15 - 20 ln 10 - 10 ln 5 = 19.0954:
# d1 = 54 * 6.9315 / 1622 = 0.2308, d2 = 54 * 19.0954 / 1622 = 0.6357.
expect_rc 0 "$dsmm" clm dist --mode vi A.txt B.txt
expect_grep out $'^d=0.866\td1=0.231\td2=0.636\tnn=1622\t'
expect_rc 0 "$dsmm" clm dist --mode vi --digits 6 A.txt B.txt
expect_grep out $'^d=0\\.866[0-9]{3}\td1=0\\.230[0-9]{3}\td2=0\\.635[0-9]{3}\t'
expect_rc 0 "$dsmm" clm dist --index A.txt B.txt
expect_grep out '^rand=0.99487 jaccard=0.46813 arand=0.63526 n1=A.txt n2=B.txt$'
expect_rc 0 "$dsmm" clm dist A.txt A.txt
expect_grep out $'^d=0\td1=0\td2=0\tnn=1622\tc1=163\tc2=163\t'

# clm info (the numbers mcl 22-282's clm info prints for these files)
expect_rc 0 "$dsmm" clm info "$collins" A.txt B.txt
expect_grep out '^eff=0.24003 mod=0.23419 mf=0.54665 af=0.00555  src=A.txt ncl=163 max=10  ctr=10.0 avg=10.0 min=2 DGI=2 TWI=81 TWL=10 sgl=0 qrt=1$'
expect_grep out '^===$'
expect_grep out '^eff=0.20701 mod=0.29282 mf=0.58676 af=0.00863  src=B.txt ncl=109 max=15  ctr=15.0 avg=14.9 min=2 DGI=2 TWI=54 TWL=15 sgl=0 qrt=1$'

# Three files: every pair, --chain, --one-to-many; gzip input; JSON.
awk '{printf "%s%s", $0, (NR % 2 == 0 ? "\n" : "\t")}' labels >C.txt
gzip -c C.txt >C.txt.gz
expect_rc 0 "$dsmm" clm dist A.txt B.txt C.txt.gz
if [ "$(grep -c '^d=' out)" -eq 3 ]; then ok; else bad "3 pairs expected: $(cat out)"; fi
expect_grep out $'n1=B.txt\tn2=C.txt.gz$'
expect_rc 0 "$dsmm" clm dist --chain A.txt B.txt C.txt.gz
if [ "$(grep -c '^d=' out)" -eq 2 ] && ! grep -q $'n1=A.txt\tn2=C' out; then ok; else bad "--chain: $(cat out)"; fi
expect_rc 0 "$dsmm" clm dist --one-to-many A.txt B.txt C.txt.gz
if [ "$(grep -c '^d=' out)" -eq 2 ] && ! grep -q 'n1=B.txt' out; then ok; else bad "--one-to-many: $(cat out)"; fi
expect_rc 0 "$dsmm" clm dist C.txt C.txt.gz
expect_grep out $'^d=0\td1=0\td2=0\tnn=1622\tc1=811\tc2=811\t'
expect_rc 0 "$dsmm" clm dist --json A.txt B.txt
cp out dist.json
if python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))["pairs"][0]
assert d["n1"] == "A.txt" and d["nn"] == 1622 and d["c1"] == 163 and d["c2"] == 109
assert d["sj"] == {"d": 810, "d1": 270, "d2": 540} and d["mk"]["d"] == 13500
assert abs(d["vi"]["d1"] - 0.23077) < 1e-4 and abs(d["arand"] - 0.63526) < 1e-5
assert d["only1"] == 0 and d["only2"] == 0
' dist.json 2>pyerr; then ok; else bad "dist --json: $(head -c 300 pyerr)"; fi
expect_rc 0 "$dsmm" clm info --json "$collins" A.txt
if python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
c = d["clusterings"][0]
assert d["nodes"] == 1622 and c["src"] == "A.txt" and c["ncl"] == 163 and c["listed"] == 1622
assert abs(c["eff"] - 0.24003) < 1e-5 and abs(c["mod"] - 0.23419) < 1e-5
assert abs(c["mf"] - 0.54665) < 1e-5 and abs(c["af"] - 0.00555) < 1e-5 and c["TWI"] == 81
' out 2>pyerr; then ok; else bad "info --json: $(head -c 300 pyerr)"; fi

# --stats - takes stdout: the distances and measures go to stderr, and stdout is the one JSON
# record (json.load fails on anything after it); with --json as well it is a usage error.
stdout_record() { # OP: out is exactly one statistics record of OP
    if python3 -c 'import json, sys; d = json.load(open("out")); sys.exit(d["op"] != sys.argv[1])' "$1" 2>pyerr; then ok; else bad "--stats - for $1: $(head -c 300 out) $(head -c 200 pyerr)"; fi
}
expect_rc 0 "$dsmm" clm dist A.txt B.txt --stats -
stdout_record "clm dist"
expect_grep err $'^d=810\td1=270\td2=540\tnn=1622\t'
expect_rc 0 "$dsmm" clm info "$collins" A.txt B.txt --stats -
stdout_record "clm info"
expect_grep err '^eff=0.24003 .* src=A.txt '
expect_grep err '^===$'
expect_rc 2 "$dsmm" clm dist --json A.txt B.txt --stats -
expect_grep err '^dsmm clm dist: --json and --stats - cannot both use stdout$'
expect_rc 2 "$dsmm" clm info --json "$collins" A.txt --stats -
expect_grep err '^dsmm clm info: --json and --stats - cannot both use stdout$'

# Nodes only one clustering lists form one extra cluster in the other, with a note (as clm
# dist's "not a partition (fixed ...)"); for info, nodes in no cluster, with a note. A without
# its first cluster gets that cluster back; without the first and last, the two merge.
tail -n +2 A.txt >A-first.txt
expect_rc 0 "$dsmm" clm dist A.txt A-first.txt
expect_grep out $'^d=0\td1=0\td2=0\tnn=1622\tc1=163\tc2=163\t'
expect_grep err 'note: 10 nodes of A.txt are not in A-first.txt \(first: YAL001C\); they form one extra cluster there'
sed '1d;$d' A.txt >A-ends.txt
expect_rc 0 "$dsmm" clm dist A.txt A-ends.txt
expect_grep out $'^d=2\td1=0\td2=2\tnn=1622\tc1=163\tc2=162\t'
expect_rc 0 "$dsmm" clm dist -q A.txt A-first.txt
if [ -s err ]; then bad "-q: stderr not empty"; else ok; fi
expect_rc 0 "$dsmm" clm info "$collins" A-first.txt
expect_grep out 'ncl=162 '
expect_grep err 'note: A-first.txt lists 1612 of the 1622 graph nodes \(first missing: YAL001C\)'

# A Matrix Market graph: members are 0-based node indices.
seq 0 2707 | awk '{printf "%s%s", $0, (NR % 20 == 0 ? "\n" : "\t")} END {printf "\n"}' >cora.txt
expect_rc 0 "$dsmm" clm info "$cora" cora.txt
expect_grep out 'ncl=136 max=20 '

# --- bad input -----------------------------------------------------------------------------
expect_rc 1 "$dsmm" clm dist A.txt missing.txt
expect_grep err '^dsmm clm dist: .*missing.txt'
printf 'a b\nc a\n' >dup.txt
expect_rc 1 "$dsmm" clm dist A.txt dup.txt
expect_grep err "dup.txt:2: node 'a' is listed twice \\(also on line 1\\)"
printf 'YAL001C\tnot_a_node\n' >alien.txt
expect_rc 1 "$dsmm" clm info "$collins" alien.txt
expect_grep err "alien.txt:1: node 'not_a_node' is not among the 1622 known nodes"
expect_rc 1 "$dsmm" clm info missing.abc A.txt
expect_grep err 'missing.abc'
: >empty.abc
expect_rc 1 "$dsmm" clm info --format abc empty.abc A.txt
expect_grep err '^dsmm clm info: '
printf '0\t1\n2\n' >idx.txt
expect_rc 1 "$dsmm" clm dist A.txt idx.txt
expect_grep err 'no node in common'
: >empty.txt
expect_rc 0 "$dsmm" clm info "$collins" empty.txt
expect_grep out 'ncl=0 '
expect_rc 2 "$dsmm" clm dist A.txt
expect_grep err '^dsmm clm dist: needs at least two cluster files'
expect_rc 2 "$dsmm" clm dist --bogus A.txt B.txt
expect_grep err "unknown option '--bogus'"
expect_rc 2 "$dsmm" clm dist --mode xx A.txt B.txt
expect_rc 2 "$dsmm" clm dist --chain --one-to-many A.txt B.txt
expect_rc 2 "$dsmm" clm info "$collins"
expect_rc 2 "$dsmm" clm frobnicate
expect_grep err "unknown tool 'frobnicate'"
expect_rc 2 "$dsmm" clm

# --- against mcl's clm ---------------------------------------------------------------------
if command -v clm >/dev/null 2>&1 && command -v mcxload >/dev/null 2>&1; then
    zcat "$collins" >g.abc
    mcxload -abc g.abc --stream-mirror -write-tab g.tab -o g.mci 2>/dev/null
    for f in A B C A-first A-ends; do
        mcxload -etc-ai $f.txt -strict-tabr g.tab -o $f.mci 2>/dev/null
    done
    for mode in sj vi mk; do
        clm dist -mode $mode A.mci B.mci C.mci >clm.out 2>/dev/null
        "$dsmm" clm dist --mode $mode A.txt B.txt C.txt.gz >dsmm.out 2>/dev/null
        expect_same clm.out dsmm.out
    done
    clm dist --index A.mci B.mci C.mci >clm.out 2>/dev/null
    "$dsmm" clm dist --index A.txt B.txt C.txt >dsmm.out
    expect_same clm.out dsmm.out
    # clm puts the missing nodes in one cluster ("not a partition (fixed ...)"), like dsmm.
    for f in A-first A-ends; do
        clm dist A.mci $f.mci >clm.out 2>/dev/null
        "$dsmm" clm dist -q A.txt $f.txt >dsmm.out
        expect_same clm.out dsmm.out
    done
    # dsmm reads clm's native files too.
    clm dist A.mci B.mci >clm.out 2>/dev/null
    "$dsmm" clm dist A.mci B.mci >dsmm.out
    expect_same clm.out dsmm.out
    # clm info: one cluster file per run (clm info 22-282 carries state from one file to the
    # next, so later files of one run get other eff and mf).
    for f in A B C A-first A-ends; do
        clm info g.mci $f.mci >clm.out 2>/dev/null
        "$dsmm" clm info -q "$collins" $f.txt >dsmm.out
        expect_same clm.out dsmm.out
    done
    # A Matrix Market graph through an index tab.
    printf '%s\n' $(seq 0 2707) | awk '{print $1 "\t" $1}' >idx.tab
    zcat "$cora" | awk '!/^%/ && n++ {print $1 - 1 "\t" $2 - 1}' >cora.abc
    mcxload -abc cora.abc --stream-mirror -strict-tab idx.tab -o cora.mci 2>/dev/null
    mcxload -etc-ai cora.txt -strict-tabr idx.tab -o cora-cl.mci 2>/dev/null
    clm info cora.mci cora-cl.mci >clm.out 2>/dev/null
    "$dsmm" clm info "$cora" cora.txt >dsmm.out
    expect_same clm.out dsmm.out
else
    echo "SKIP: clm not installed (the comparisons with mcl's clm dist and clm info)"
fi

echo "test_cli_clm: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
