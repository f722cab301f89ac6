#!/bin/bash
# tests/cli/test_cli_mcl.sh: `dsmm mcl` as a user runs it: collins2007 clustered byte for byte
# as mcl 22-282 clusters it (bundled references at -I 1.4, 2, 4; and mcl itself when it is
# installed, with pruning settings that exercise selection and recovery), the -I sweep,
# mcl's default output name, -o -, --stats JSON, checkpoint + resume, Matrix Market input
# (1-based and -base 0 output), 2 and 4 ranks with phases, a planted partition recovered
# (adjusted Rand index from dsmm clm dist), -z, and bad input: exit 2 for usage errors, 1 for
# runtime failures, a message naming the problem, no output file left behind. Also mcl's
# -overlap, -sort, --force-connected/--check-connected, -c 0 and the SIF/ETC label layouts
# against bundled references (tests/data/mcl-modes), at 1 to 4 ranks.
# usage: test_cli_mcl.sh DSMM_BINARY DATA_DIR [unused]
set -u
dsmm=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
data=$(cd "$2" && pwd)
. "$(dirname "$0")/lib.sh"
collins=$data/collins2007.txt.gz
md0=$data/mcl-modes
cd "$tmp" || exit 1

# same FILE1 FILE2: the two files are byte-identical.
same() {
    if cmp -s "$1" "$2"; then ok; else bad "$1 differs from $2: $(cmp "$1" "$2" 2>&1 | head -1)"; fi
}

# --- help and defaults ------------------------------------------------------------------------
expect_rc 0 "$dsmm" mcl --help
expect_grep "$tmp/out" '^usage: dsmm mcl INPUT'
expect_grep "$tmp/out" '-pct n'
expect_rc 0 "$dsmm" mcl -z
expect_grep "$tmp/out" '^Prune number +10000 +\[-P n\]'
expect_grep "$tmp/out" '^Selection number +1100'
expect_grep "$tmp/out" '^Recovery number +1400'
expect_grep "$tmp/out" '^Main inflation +2.0'
expect_rc 0 "$dsmm" mcl -scheme 2 -z
expect_grep "$tmp/out" '^Prune number +4000'
# mcl's verbosity words: -q x -V all (mcl's quietest), before or after INPUT; -V alone; -v WORD
expect_rc 0 "$dsmm" mcl "$collins" --abc -q x -V all -o vq.a
if [ -s "$tmp/err" ]; then bad "-q x -V all wrote to stderr: $(head -c 200 "$tmp/err")"; else ok; fi
expect_rc 0 "$dsmm" mcl -q x -V all "$collins" --abc -o vq.b
same vq.b vq.a
expect_rc 0 "$dsmm" mcl "$collins" --abc -v all -V pruning -o vq.c
same vq.c vq.a
expect_grep "$tmp/err" '^ +1 +16\.07 '
expect_rc 0 "$dsmm" mcl "$collins" --abc -annot 'run 7' -q x -V all -o vq.d
same vq.d vq.a
expect_rc 2 "$dsmm" mcl "$collins" --abc -v -o vq.bad
expect_grep "$tmp/err" '-v needs a mode: pruning, explain, cls or all'
expect_rc 2 "$dsmm" mcl "$collins" --abc -V loud -o vq.bad
expect_grep "$tmp/err" "-V: 'loud' is not all, pruning, explain or cls"
expect_none vq.bad
# --version: dsmm's version and the mcl it follows, no INPUT needed
expect_rc 0 "$dsmm" mcl --version
expect_grep "$tmp/out" '^dsmm mcl [0-9]+\.[0-9]+\.[0-9]+ \(the options, output and clusters of mcl 22-282\)$'
# --show-schemes: mcl 22-282's table, byte for byte, no INPUT needed
expect_rc 0 "$dsmm" mcl --show-schemes
same "$tmp/out" "$md0/show-schemes.txt"
# -how-much-ram N: mcl 22-282's three lines (16 x min(max(S, R), N) x N bytes in GiB, rounded;
# the degree 2 x min(max(S, R), N)), no INPUT needed; the figures below are mcl's own output
expect_rc 0 "$dsmm" mcl -how-much-ram 1000000
printf '%s\n' 'The current settings require at most <21G> RAM for a graph with <1000000> nodes,' \
    'assuming the average node degree of the input graph does not exceed <2800>.' \
    'This estimate will usually but not always be too cautious/high.' >ram.want
same "$tmp/out" ram.want
expect_rc 0 "$dsmm" mcl "$collins" --abc -how-much-ram 1000000 -S 100 -R 50
expect_grep "$tmp/out" '^The current settings require at most <1G> RAM for a graph with <1000000> nodes,$'
expect_grep "$tmp/out" 'does not exceed <200>\.$'
expect_rc 0 "$dsmm" mcl -scheme 7 -how-much-ram 99999999999
expect_grep "$tmp/out" 'at most <2384186G> RAM for a graph with <99999999999> nodes'
expect_rc 0 "$dsmm" mcl -how-much-ram 12
expect_grep "$tmp/out" 'at most <0G> RAM .* <12> nodes'
expect_grep "$tmp/out" 'does not exceed <24>\.$'
expect_rc 2 "$dsmm" mcl -how-much-ram many
expect_grep "$tmp/err" "how-much-ram: 'many' is not an integer"
expect_rc 2 "$dsmm" mcl -how-much-ram -5

# --- collins against mcl's clusterings ----------------------------------------------------------
for I in 1.4 2.0 4.0; do
    zcat "$data/collins2007.mcl-I$I.clusters.gz" >"ref.$I"
    expect_rc 0 "$dsmm" mcl "$collins" --abc -I "$I" -o "got.$I"
    same "got.$I" "ref.$I"
done
expect_grep "$tmp/err" '366 clusters found'
# The sweep reads once and writes one clustering per value, the same as the single runs.
expect_rc 0 "$dsmm" mcl "$collins" --abc -I 1.4,2,4 -o sweep -q
same sweep.I14 ref.1.4
same sweep.I20 ref.2.0
same sweep.I40 ref.4.0
# mcl's default name in the current directory; -o - to stdout; threads change nothing.
expect_rc 0 "$dsmm" mcl "$collins" --abc -te 2
same out.collins2007.txt.gz.I20 ref.2.0
# mcl's -odir, -ap and -aa shape that name as mcl 22-282 does (a prefix with '=' gives out.mcl).
mkdir -p od
expect_rc 0 "$dsmm" mcl "$collins" --abc -odir od -ap mine -aa .x -I 4 -q
same od/mine.I40.x ref.4.0
expect_rc 0 "$dsmm" mcl "$collins" --abc -aa _t -q
same out.collins2007.txt.gz.I20_t ref.2.0
expect_rc 0 "$dsmm" mcl "$collins" --abc -ap 'p=' -q
same out.mcl ref.2.0
expect_grep "$tmp/err" 'writing to out.mcl instead'
# -az / -ax: the name or suffix mcl 22-282 prints (no newline), nothing run or written; '=' in
# -ap stands for the input as given (here a file in the current directory: a name that opens)
zcat "$collins" >collins.abc
expect_rc 0 "$dsmm" mcl collins.abc --abc -I 1.4 -ap 'pre=' -aa suf -az
if [ "$(cat "$tmp/out")" = "precollins.abc.I14suf" ]; then ok; else bad "-az: $(cat "$tmp/out")"; fi
expect_rc 0 "$dsmm" mcl collins.abc --abc -I 1.4 -c 2 -pi 1.5 -ax -aa .x
if [ "$(cat "$tmp/out")" = "I14pi15c20.x" ]; then ok; else bad "-ax: $(cat "$tmp/out")"; fi
expect_rc 0 "$dsmm" mcl dir/g.abc --abc -I 3 --d -az
if [ "$(cat "$tmp/out")" = "dir/out.g.abc.I30" ]; then ok; else bad "-az --d: $(cat "$tmp/out")"; fi
expect_rc 0 "$dsmm" mcl dir/g.abc --abc -odir . -az
if [ "$(cat "$tmp/out")" = "out.g.abc.I20" ]; then ok; else bad "-az -odir .: $(cat "$tmp/out")"; fi
expect_rc 0 "$dsmm" mcl collins.abc --abc -I 1.4 -ap 'x=y' -q
same xcollins.abcy.I14 ref.1.4
expect_rc 1 "$dsmm" mcl "$collins" --abc -odir no/such/dir -q
expect_none no/such/dir/out.collins2007.txt.gz.I20
# An output name that does not fit dsmm's 4095 characters: a usage error, not a shortened name.
long=$(printf 'd%.0s' $(seq 4100))
expect_rc 2 "$dsmm" mcl "$collins" --abc -o "$long" -q
expect_grep "$tmp/err" "output file's name is longer than 4095 characters"
expect_rc 2 "$dsmm" mcl "$collins" --abc -ap "$long" -q
expect_grep "$tmp/err" "output file's name is longer than 4095 characters"
expect_rc 2 "$dsmm" mcl "$collins" --abc -I 2,3 -odir "$long" -q
expect_grep "$tmp/err" "output file's name is longer than 4095 characters"
expect_rc 0 "$dsmm" mcl "$collins" --abc -o - -q
same "$tmp/out" ref.2.0
if command -v mcl >/dev/null 2>&1; then
    zcat "$collins" >collins.abc
    # the pruning options in mcl's order rules (-scheme and -resource against -P/-p/-S/-R)
    for args in "-scheme 1" "-P 300 -S 20 -R 30 -pct 80" "-P 50 -S 0 -R 100 -pct 99" "-p 0.01 -S 5 -R 0" "-I 3 -c 2.5" "-l 2 -i 1.5" \
        "-S 5 -R 5 -scheme 2" "-scheme 2 -resource 5 -R 3" "-P 10 -resource 5 -R 3" "-p 0.1 -resource 5 -R 3" "-resource 7 -R 2"; do
        # shellcheck disable=SC2086
        mcl collins.abc --abc $args -o mcl.out 2>/dev/null
        # shellcheck disable=SC2086
        expect_rc 0 "$dsmm" mcl collins.abc --abc $args -o dsmm.out
        same dsmm.out mcl.out
    done
else
    echo "SKIP: mcl not installed: comparisons with other settings (the bundled references ran)"
fi

# --- mcl's weight transforms (-tf, -abc-tf, --abc-neg-log10) --------------------------------------
# BLAST-like e-values (some 0) through mcl's BLAST protocol, against mcl 22-282's clusterings.
ev=$data/collins2007.evalues.txt.gz
zcat "$data/collins2007.evalues.mcl-neglog10-ceil200.clusters.gz" >ref.ev
zcat "$data/collins2007.evalues.mcl-neglog10-ceil200-gq5-add-4-I1.4.clusters.gz" >ref.evtf
expect_rc 0 "$dsmm" mcl "$ev" --abc --abc-neg-log10 -abc-tf 'ceil(200)' -o got.ev
same got.ev ref.ev
expect_rc 0 "$dsmm" mcl "$ev" --abc --abc-neg-log10 -abc-tf 'ceil(200)' -tf 'gq(5), add(-4)' -I 1.4 -o got.evtf --stats evtf.json
same got.evtf ref.evtf
expect_grep evtf.json '"tf": ?"gq\(5\),add\(-4\)"'
expect_grep evtf.json '"abc_neg_log": ?"10"'
expect_grep evtf.json '"abc_tf": ?"ceil\(200\)"'
# Without the transforms the e-values cluster otherwise (the test would pass on ignored options).
expect_rc 0 "$dsmm" mcl "$ev" --abc -o got.raw -q
if cmp -s got.raw ref.ev; then bad "the e-values clustered as their -log10 did"; else ok; fi
if command -v mcl >/dev/null 2>&1; then
    zcat "$ev" >ev.abc
    for args in "-tf gq(0.5)" "-tf pow(2),mul(3)" "-tf neglog()" "-abc-tf exp() -I 3" \
        "-abc-tf floor(0.9),lt(0.95)" "-tf log(10),abs()"; do
        # shellcheck disable=SC2086
        mcl collins.abc --abc $args -o mcl.out 2>/dev/null
        # shellcheck disable=SC2086
        expect_rc 0 "$dsmm" mcl collins.abc --abc $args -o dsmm.out
        same dsmm.out mcl.out
    done
    for args in "--abc-neg-log -abc-tf ceil(300)" "--abc-neg-log10 -tf ceil(100) -I 1.4"; do
        # shellcheck disable=SC2086
        mcl ev.abc --abc $args -o mcl.out 2>/dev/null
        # shellcheck disable=SC2086
        expect_rc 0 "$dsmm" mcl ev.abc --abc $args -o dsmm.out
        same dsmm.out mcl.out
    done
fi
# Bad transforms: usage errors (exit 2) naming the step; no output file.
for spec in 'bogus(1)' 'gt()' 'abs(2)' 'gt(1' 'gt(x)' 'log(1)' 'gt(1),' 'gt(1) mul(2)'; do
    expect_rc 2 "$dsmm" mcl "$collins" --abc -tf "$spec" -o tf.bad
    expect_grep "$tmp/err" "^dsmm mcl: -tf: .*mcl transform"
    expect_none tf.bad
done
# mcl's graph-wide steps, against mcl 22-282's clusterings (bundled), alone and among value steps.
zcat "$data/collins2007.mcl-knn10.clusters.gz" >ref.knn
zcat "$data/collins2007.mcl-gq0.3-ceilnb20-knnj6-I1.4.clusters.gz" >ref.gtf
expect_rc 0 "$dsmm" mcl "$collins" --abc -tf '#knn(10)' -o got.knn --stats knn.json
same got.knn ref.knn
expect_grep knn.json '"tf": ?"#knn\(10\)"'
expect_rc 0 "$dsmm" mcl "$collins" --abc -tf 'gq(0.3), #ceilnb(20), #knnj(6)' -I 1.4 -o got.gtf
same got.gtf ref.gtf
if cmp -s got.knn ref.2.0; then bad "-tf '#knn(10)' clustered as no transform did"; else ok; fi
expect_rc 2 "$dsmm" mcl "$collins" --abc -tf 'gt(1),#step()' -o tf.bad
expect_grep "$tmp/err" "'#step': this graph-wide transform of mcl's is not supported"
expect_rc 2 "$dsmm" mcl "$collins" --abc -tf '#knn(-3)' -o tf.bad
expect_grep "$tmp/err" "the count must be in 0"
expect_rc 2 "$dsmm" mcl "$collins" --abc -abc-tf '#knn(5)' -o tf.bad
expect_grep "$tmp/err" "graph-wide steps .* give them with -tf"
expect_none tf.bad
expect_rc 2 "$dsmm" mcl "$collins" --abc -abc-tf 'acos()' -o tf.bad
expect_grep "$tmp/err" "'acos' is not supported"
expect_rc 2 "$dsmm" mcl "$data/hep-th.mtx.gz" --abc-neg-log10 -o tf.bad
expect_grep "$tmp/err" "give --abc"
expect_rc 2 "$dsmm" mcl "$collins" --abc --abc-neg-log --abc-neg-log10 -o tf.bad
expect_none tf.bad
# A weight the transforms make negative is refused (mcl would go on): exit 1 and a hint.
printf 'a\tb\t2.5\nb\tc\t0.1\n' >evneg.abc
expect_rc 1 "$dsmm" mcl evneg.abc --abc --abc-neg-log10 -o tf.bad
expect_grep "$tmp/err" "has weight -0.39794"
expect_grep "$tmp/err" "gt\(0\)"
expect_none tf.bad
expect_rc 1 "$dsmm" mcl evneg.abc --abc -tf 'add(-1)' -o tf.bad
expect_grep "$tmp/err" "after -tf 'add\(-1\)'"
expect_rc 0 "$dsmm" mcl evneg.abc --abc --abc-neg-log10 -abc-tf 'gt(0)' -o tf.ok
expect_rc 1 "$dsmm" mcl evneg.abc --abc -abc-tf 'add(-1),pow(0.5)' -o tf.bad
expect_grep "$tmp/err" "evneg.abc:2: weight '0.1' becomes -?nan after the transforms"
expect_none tf.bad

# --- statistics, checkpoint and resume ----------------------------------------------------------
expect_rc 0 "$dsmm" mcl "$collins" --abc -o s.out --stats s.json
# DESIGN.md's stable keys first, in order; flops the iterations' sum (each one's products, at
# least one per entry kept); nnz_in the input's entries (collins: 9074 abc lines over 1622
# vertices, before mcl makes the graph symmetric); one record per iteration under "iterations".
if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); it=d["iterations"]
stable=["op","algo","ranks","threads","seconds","io_seconds","flops","nnz_in","nnz_out","peak_bytes","bytes_sent"]
assert list(d)[:len(stable)]==stable, list(d)[:len(stable)]
assert d["op"]=="mcl" and d["algo"]=="fused" and d["clusters"]==300 and d["iteration_count"]==len(it)==22
assert d["nnz_in"]==9074 and d["nnz_out"]==d["vertices"]==1622 and d["bytes_sent"]==0 and d["peak_bytes"]>0
assert d["flops"]==sum(x["flops"] for x in it) and all(x["flops"] >= x["nnz_expand"] > 0 for x in it)
assert [x["iteration"] for x in it]==list(range(1,23)) and d["converged"] is True
assert it[-1]["chaos"] < 1e-4 <= it[-2]["chaos"]
assert all(x["nnz_pruned"] <= x["nnz_expand"] and x["phases"] == 1 for x in it)' s.json 2>"$tmp/pyerr"; then
    ok
else
    bad "s.json: $(head -c 300 "$tmp/pyerr")"
fi
expect_rc 0 "$dsmm" report s.json
expect_grep "$tmp/out" 'mcl fused, ranks 1'
# One row per iteration: 22 of them, the first one's products and counts as the record has them.
n=$(grep -cE '^ +[0-9]+ +[0-9.]+ +[0-9.e+]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9.e+-]+ +fused +- +- +- +-$' "$tmp/out")
if [ "$n" = 22 ]; then ok; else bad "dsmm report s.json: $n iteration rows, want 22"; fi
row1=$(python3 -c 'import json,sys; i=json.load(open(sys.argv[1]))["iterations"][0]
print(i["nnz_in"], i["nnz_expand"], i["nnz_pruned"])' s.json)
if grep -qE "^ +1 +[0-9.]+ +[0-9.e+]+ +${row1// / +} " "$tmp/out"; then ok; else bad "report: iteration 1 is not '$row1'"; fi
# A record whose iteration lacks a number is refused, naming it.
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); del d["iterations"][3]["flops"]
json.dump(d, open(sys.argv[2], "w"))' s.json s_bad.json
expect_rc 1 "$dsmm" report s_bad.json
expect_grep "$tmp/err" "missing key 'iterations\[3\]\.flops'"
expect_rc 0 "$dsmm" mcl "$collins" --abc -L 5 --checkpoint ck -o part.out -q
expect_grep ck/state '^iteration 5$'
expect_rc 0 "$dsmm" mcl "$collins" --abc --resume ck -o resumed.out -q --stats resumed.json
same resumed.out ref.2.0
# After a resume the records are the iterations run since the checkpoint (6..22), the same
# as the whole run's (an earlier build listed 22 records here, the last 5 uninitialised).
if python3 -c 'import json,sys; d,s=[json.load(open(f)) for f in sys.argv[1:3]]; it=d["iterations"]
assert d["iteration_count"]==22 and [x["iteration"] for x in it]==list(range(6,23))
w=s["iterations"][5:]
assert all(a[k]==b[k] for a,b in zip(it,w) for k in ("flops","nnz_in","nnz_expand","nnz_pruned","chaos"))' resumed.json s.json 2>"$tmp/pyerr"; then
    ok
else
    bad "resumed.json: $(head -c 300 "$tmp/pyerr")"
fi
expect_rc 1 "$dsmm" mcl "$collins" --abc -I 3 --resume ck -o bad.out
expect_grep "$tmp/err" 'other settings'
expect_none bad.out
# The same edges with the lines in another order number the vertices otherwise: the
# checkpoint's iterate does not belong to this input, and resuming it would mislabel clusters.
gzip -dc "$collins" | tac >reordered.abc
expect_rc 1 "$dsmm" mcl reordered.abc --abc --resume ck -o bad.out
expect_grep "$tmp/err" 'made from another graph'
expect_none bad.out
# An edited iterate (a negative value) is refused, naming the entry.
cp -r ck ck_bad
expect_rc 0 "$dsmm" convert ck/iterate-5.bin it.mtx -q
awk 'NR == 3 { $3 = -$3 } { print }' it.mtx >it_bad.mtx
expect_rc 0 "$dsmm" convert it_bad.mtx ck_bad/iterate-5.bin -q
expect_rc 1 "$dsmm" mcl "$collins" --abc --resume ck_bad -o bad.out
expect_grep "$tmp/err" 'iterate-5.bin: entry \(1, [0-9]+\) of the iterate is -'
expect_none bad.out
# A checkpoint of the first format (no fingerprint) is refused with the reason.
sed 's/^dsmm-mcl-checkpoint 2$/dsmm-mcl-checkpoint 1/' ck/state >ck/state.1 && mv ck/state.1 ck/state
expect_rc 1 "$dsmm" mcl "$collins" --abc --resume ck -o bad.out
expect_grep "$tmp/err" 'checkpoint of format 1'
expect_none bad.out

# --- Matrix Market input ------------------------------------------------------------------------
expect_rc 0 "$dsmm" mcl "$data/hep-th.mtx.gz" -o hep1 -q
expect_rc 0 "$dsmm" mcl "$data/hep-th.mtx.gz" -base 0 -o hep0 -q
if python3 -c 'import sys
a=[[int(x) for x in l.split()] for l in open(sys.argv[1])]
b=[[int(x) for x in l.split()] for l in open(sys.argv[2])]
assert len(a)==len(b) and all([x-1 for x in p]==q for p,q in zip(a,b))
assert sorted(x for p in a for x in p)==list(range(1,8362))' hep1 hep0 2>"$tmp/pyerr"; then
    ok
else
    bad "hep-th -base 0 vs 1: $(head -c 300 "$tmp/pyerr")"
fi

# --- mcl's native matrix format (.mci, what mcxload writes) -----------------------------------------
# proteins.mci (mcl's example graph, not symmetric, read as it is): the clusterings of mcl
# 22-282 (bundled, written in mcl's native format, its '# cline' comment left out) byte for
# byte, line breaks included, and -use-tab's labels byte for byte.
pm=$data/proteins.mci.gz
for I in 1.4 2.0 4.0; do
    zcat "$data/proteins.mcl-I$I.clusters.gz" >"pref.$I"
    expect_rc 0 "$dsmm" mcl "$pm" -I "$I" -o "pgot.$I"
    same "pgot.$I" "pref.$I"
    expect_rc 0 "$dsmm" clm dist "pref.$I" "pgot.$I"
    expect_grep "$tmp/out" '^d=0	'
done
# mcl's line breaks depend on the width of the domain's numbers: 12345 vertices (five digits),
# three cliques of 60, 90 and 40 and singletons; the cliques' lines are mcl's, byte for byte
expect_rc 0 "$dsmm" mcl "$md0/wide.mci.gz" -o wide.got -q
if [ "$(head -n 23 wide.got)" = "$(cat "$md0/wide.mcl-head")" ]; then ok; else bad "wide.mci: the native layout differs from mcl's"; fi
if [ "$(wc -l <wide.got)" = 12179 ]; then ok; else bad "wide.mci: $(wc -l <wide.got) lines, mcl wrote 12179"; fi
zcat "$data/proteins.mcl-I2.0-tab.clusters.gz" >ptab.ref
expect_rc 0 "$dsmm" mcl "$pm" -use-tab "$data/proteins.tab" -o ptab.got
same ptab.got ptab.ref
expect_rc 0 "$dsmm" info "$pm"
expect_grep "$tmp/out" '^format: +mci \(gzip\)'
expect_grep "$tmp/out" '^stored entries: +19906'
if command -v mcl >/dev/null 2>&1 && command -v mcxload >/dev/null 2>&1; then
    # collins through mcxload (mirrored, labels in a tab): the same clusters as --abc.
    zcat "$collins" >collins2.abc
    mcxload -abc collins2.abc --stream-mirror -o collins.mci -write-tab collins.tab 2>/dev/null
    expect_rc 0 "$dsmm" mcl collins.mci -use-tab collins.tab -o cmci.got
    same cmci.got ref.2.0
    mcl collins.mci -I 4 -o cmci.mcl 2>/dev/null
    expect_rc 0 "$dsmm" mcl collins.mci -I 4 -o cmci.dsmm
    expect_rc 0 "$dsmm" clm dist cmci.mcl cmci.dsmm
    expect_grep "$tmp/out" '^d=0	'
fi
# -use-tab: only for native input; a bad tab file fails (exit 1) with no output.
expect_rc 2 "$dsmm" mcl "$collins" --abc -use-tab "$data/proteins.tab" -o tab.bad
expect_none tab.bad
expect_rc 2 "$dsmm" mcl "$data/hep-th.mtx.gz" -use-tab "$data/proteins.tab" -o tab.bad
expect_grep "$tmp/err" "labels mcl's native"
head -n 300 "$data/proteins.tab" >short.tab
expect_rc 1 "$dsmm" mcl "$pm" -use-tab short.tab -o tab.bad
expect_grep "$tmp/err" "short.tab: index 300 has no label"
expect_none tab.bad
{ cat "$data/proteins.tab"; printf '5\tagain\n'; } >dup.tab
expect_rc 1 "$dsmm" mcl "$pm" -use-tab dup.tab -o tab.bad
expect_grep "$tmp/err" "dup.tab:313: (index 5 listed twice|more than 312 labels)"
expect_rc 1 "$dsmm" mcl "$pm" -use-tab missing.tab -o tab.bad
expect_none tab.bad
# Written by dsmm convert: the same matrix read back, and the same clusters (from dsmm and,
# where installed, from mcl itself).
expect_rc 0 "$dsmm" convert "$pm" out.mci
expect_grep out.mci '^dimensions 312x312$'
expect_rc 0 "$dsmm" convert out.mci back.mtx
expect_rc 0 "$dsmm" convert "$pm" orig.mtx
same back.mtx orig.mtx
expect_rc 0 "$dsmm" mcl out.mci -o wmci.got
expect_rc 0 "$dsmm" clm dist pref.2.0 wmci.got
expect_grep "$tmp/out" '^d=0	'
if command -v mcl >/dev/null 2>&1; then
    mcl out.mci -o wmci.mcl 2>/dev/null
    expect_rc 0 "$dsmm" clm dist pref.2.0 wmci.mcl
    expect_grep "$tmp/out" '^d=0	'
fi

# --- overlap, order, connectivity, -c 0: as mcl 22-282 (bundled references, tests/data) ---------
# lines.abc: odd line graphs, whose middle vertex mcl puts in two clusters (overlap), and
# small components of equal size (ties in the order); bipartite.abc: a random bipartite graph
# whose clusters, with weak loops, are not connected.
md=$data/mcl-modes
for m in keep split keep-lex split-size none keep-none; do
    ov=${m%%-*}
    so=${m#*-}
    args=()
    [ "$ov" != none ] && args+=(-overlap "$ov")
    [ "$ov" = none ] && args+=(-sort none)
    [ "$so" != "$m" ] && args+=(-sort "$so")
    expect_rc 0 "$dsmm" mcl "$md/lines.abc" --abc -I 2 "${args[@]}" -o "lines.$m" -q
    same "lines.$m" "$md/lines.$m"
done
# The default cuts the overlap (each middle vertex in its first cluster) and says nothing;
# keep and split say how many vertices were in overlap.
expect_rc 0 "$dsmm" mcl "$md/lines.abc" --abc -I 2 -o lines.cut
if grep -q overlap "$tmp/err"; then bad "cut mentioned overlap"; else ok; fi
expect_rc 0 "$dsmm" mcl "$md/lines.abc" --abc -I 2 --overlap=keep -o lines.keep2
same lines.keep2 "$md/lines.keep"
expect_grep "$tmp/err" 'kept 3 vertices in overlap'
# A vertex in two clusters: the lines name it twice.
if [ "$(tr '\t' '\n' <lines.keep2 | grep -c .)" -eq 31 ]; then ok; else bad "keep: not 28 vertices + 3 repeated"; fi
expect_rc 0 "$dsmm" mcl "$md/lines.abc" --abc -I 2 -overlap split -o lines.split2 --stats lines.json
expect_grep lines.json '"overlap_mode": ?"split"'
expect_grep lines.json '"overlap": ?3'
# --force-connected=y: the loose clusters split into components (largest first), the clustering
# before in OUT-rags, mcl's native format (compared without line breaks).
expect_rc 0 "$dsmm" mcl "$md/bipartite.abc" --abc -c 0.2 -I 1.4 --force-connected=y -o bip.fc --stats bip.json
same bip.fc "$md/bipartite.fc"
if [ "$(tr -s ' \n' '  ' <bip.fc-rags)" = "$(tr -s ' \n' '  ' <"$md/bipartite.fc-rags")" ]; then ok; else bad "bip.fc-rags differs from mcl's"; fi
expect_grep "$tmp/err" 'splitting yields an additional 33 clusters at a total of 38'
expect_grep bip.json '"components": ?38'
expect_grep bip.json '"clusters_before_split": ?5'
# A resumed run finds the components in the graph as the first run read it.
expect_rc 0 "$dsmm" mcl "$md/bipartite.abc" --abc -c 0.2 -I 1.4 -L 3 --checkpoint bipck -o bip.part -q
expect_rc 0 "$dsmm" mcl "$md/bipartite.abc" --abc -c 0.2 -I 1.4 --force-connected=y --resume bipck -o bip.res -q
same bip.res "$md/bipartite.fc"
# --check-connected=y reports and changes nothing; on connected clusters neither option does.
expect_rc 0 "$dsmm" mcl "$md/bipartite.abc" --abc -c 0.2 -I 1.4 -check-connected y -o bip.cc
expect_grep "$tmp/err" 'they induce 38 components'
expect_none bip.cc-rags
expect_rc 0 "$dsmm" mcl "$md/bipartite.abc" --abc -c 0.2 -I 1.4 -o bip.plain -q
same bip.cc bip.plain
expect_rc 0 "$dsmm" mcl "$collins" --abc --force-connected=y -o fc.out
same fc.out ref.2.0
expect_grep "$tmp/err" 'clustering induces connected components'
expect_none fc.out-rags
# -c 0: no loops (it used to mean 'not set' and gave the default's 300 clusters).
zcat "$data/collins2007.mcl-c0.clusters.gz" >ref.c0
expect_rc 0 "$dsmm" mcl "$collins" --abc -c 0 -o c0.out -q
same c0.out ref.c0
expect_rc 0 "$dsmm" mcl "$md/bipartite.abc" --abc -c 0 -I 2 -o bip.c0 -q
same bip.c0 "$md/bipartite.c0"
# mcl's SIF and ETC label layouts: collins as SIF lines with label:weight targets gives the
# abc file's clusters; mixed.etc (colons in labels, targets without weights, repeated pairs,
# a vertex without edges) as mcl 22-282 reads it, with and without --expect-values.
expect_rc 0 "$dsmm" mcl "$md/collins.sif.gz" --sif --expect-values -o sif.out -q
same sif.out ref.2.0
expect_rc 0 "$dsmm" mcl "$md/mixed.etc.gz" --etc --expect-values -I 1.4 -o etc.out -q
same etc.out "$md/mixed.etc.I14"
expect_rc 0 "$dsmm" mcl "$md/mixed.etc.gz" --etc -o etcn.out -q
same etcn.out "$md/mixed.etc.noval"
expect_rc 2 "$dsmm" mcl "$md/mixed.etc.gz" --etc --sif -o bad.out
expect_grep "$tmp/err" 'exclude each other'
expect_rc 2 "$dsmm" mcl "$collins" --abc --expect-values -o bad.out
expect_grep "$tmp/err" 'give --sif or --etc'
# Refused: unknown modes and y/n values (mcl takes any other word for split or revsize), a
# value given to a flag.
expect_rc 2 "$dsmm" mcl "$md/lines.abc" --abc -overlap some -o bad.out
expect_grep "$tmp/err" "-overlap: 'some' is not cut, keep or split"
expect_rc 2 "$dsmm" mcl "$md/lines.abc" --abc --sort=big -o bad.out
expect_grep "$tmp/err" "-sort: 'big' is not revsize, size, lex or none"
expect_rc 2 "$dsmm" mcl "$md/lines.abc" --abc --force-connected=maybe -o bad.out
expect_grep "$tmp/err" "--force-connected: 'maybe' is not y or n"
expect_rc 2 "$dsmm" mcl "$md/lines.abc" --abc=yes -o bad.out
expect_grep "$tmp/err" 'takes no value'
expect_none bad.out

# --- --analyze=y: mcl's measures appended (bundled mcl 22-282 output, names normalised) ------
# analyzed FILE REF: FILE's last four lines are REF's (input and output names replaced)
analyzed() {
    if [ "$(tail -4 "$1" | sed -e 's/target-name=.*/target-name=IN/' -e 's/source-name=.*/source-name=OUT/')" = "$(cat "$2")" ]; then
        ok
    else
        bad "$1: --analyze lines differ from $2: $(tail -4 "$1" | head -2 | tr '\n' ' ')"
    fi
}
expect_rc 0 "$dsmm" mcl "$collins" --abc --analyze=y -o an.out -q --stats an.json
analyzed an.out "$md/collins.analyze"
if [ "$(head -n -4 an.out)" = "$(cat ref.2.0)" ]; then ok; else bad "--analyze changed the clusters"; fi
expect_grep an.out "^eff=0.64816 mod=0.89863 mf=0.94266 af=0.01773 target-name=$collins\$"
expect_grep an.out '^source-name=an.out$'
expect_grep an.json '"modularity": ?0.8986'
# loops as -c leaves them (none), pre-inflation, kept overlap (a vertex counted in each cluster)
expect_rc 0 "$dsmm" mcl "$collins" --abc -analyze y -c 0 -o an.c0 -q
analyzed an.c0 "$md/collins-c0.analyze"
expect_rc 0 "$dsmm" mcl "$collins" --abc --analyze=y -pi 2 -I 1.4 -o an.pi -q
analyzed an.pi "$md/collins-pi2-I14.analyze"
# singletons only: clm's af sentinel, -1 / (n (n - 1)), as mcl 22-282 prints it (55 vertices)
expect_rc 0 "$dsmm" mcl "$md/bipartite.abc" --abc -tf 'lq(0.9)' --analyze=y -o an.sgl -q
expect_grep an.sgl '^eff=1.00000 mod=0.00000 mf=1.00000 af=-0.00034 target-name='
expect_rc 0 "$dsmm" mcl "$md/lines.abc" --abc --analyze=y -overlap keep -o an.keep -q
analyzed an.keep "$md/lines-keep.analyze"
if [ "$(head -n -4 an.keep)" = "$(cat "$md/lines.keep")" ]; then ok; else bad "--analyze changed the kept clusters"; fi
# to stdout: the lines follow the clusters there; n: nothing appended
expect_rc 0 "$dsmm" mcl "$collins" --abc --analyze=y -o - -q
analyzed "$tmp/out" "$md/collins.analyze"
expect_grep "$tmp/out" '^source-name=-$'
expect_rc 0 "$dsmm" mcl "$collins" --abc --analyze=n -o an.n -q
same an.n ref.2.0
expect_rc 2 "$dsmm" mcl "$collins" --abc --analyze=maybe -o an.bad -q
expect_grep "$tmp/err" "analyze: 'maybe' is not y or n"
expect_none an.bad

# --- the pruning options in order, as mcl takes them: the last word on each setting stands;
# -scheme sets P, S, R and pct; -resource n sets S = R = n, and P = 10 n unless -P, -p or
# -scheme is given (mcl 22-282, bundled: -resource 5 -R 3)
zcat "$md/collins.resource5-R3.gz" >ref.res
expect_rc 0 "$dsmm" mcl "$collins" --abc -resource 5 -R 3 -o res.a -q
same res.a ref.res
expect_rc 0 "$dsmm" mcl "$collins" --abc -S 5 -R 3 -P 50 -o res.b -q
same res.b ref.res
# with a threshold given, -resource leaves it (P = 4000 here clusters otherwise than 50)
expect_rc 0 "$dsmm" mcl "$collins" --abc -scheme 2 -resource 5 -R 3 -o res.c -q
expect_rc 0 "$dsmm" mcl "$collins" --abc -S 5 -R 3 -P 4000 -o res.d -q
same res.c res.d
if cmp -s res.c ref.res; then bad "-P 4000 and -P 50 gave the same clusters (the check above cannot fail)"; else ok; fi
# -scheme after -S/-R replaces them; before, they replace its values
expect_rc 0 "$dsmm" mcl "$collins" --abc -S 5 -R 3 -scheme 2 -o res.e -q
expect_rc 0 "$dsmm" mcl "$collins" --abc -scheme 2 -o res.f -q
same res.e res.f
expect_rc 0 "$dsmm" mcl "$collins" --abc -scheme 2 -S 5 -R 3 -P 4000 -o res.g -q
same res.g res.d
# -p and -P: the later one
expect_rc 0 "$dsmm" mcl "$collins" --abc -p 0.1 -P 50 -S 5 -R 3 -o res.h -q
same res.h ref.res
expect_rc 2 "$dsmm" mcl "$collins" --abc -resource 0 -o res.bad -q
expect_grep "$tmp/err" "resource: '0' is not an integer"
expect_rc 2 "$dsmm" mcl "$collins" --abc -p 0.2 -o res.bad -q
expect_grep "$tmp/err" "'0.2' is not a number in \\[0, 0.1\\]"
expect_none res.bad

# --- mcl's transpose joins (-tf '#max()', '#min()', '#tp()', '#arcsub()', ...) on a directed
# graph in mcl's native format (200 vertices), against mcl 22-282 (bundled, native output)
dg=$md/directed.mci.gz
for c in "#max():max" "#tp():tp" "#min(),gq(1):mingq1" "#arcsub(),gt(0):arcsubgt0" "#tug():tug"; do
    expect_rc 0 "$dsmm" mcl "$dg" -tf "${c%:*}" -o "dg.${c##*:}" -q
    same "dg.${c##*:}" "$md/directed.${c##*:}"
done
# #arcmax() then #add(): the same graph as #max() here (mcl's too)
expect_rc 0 "$dsmm" mcl "$dg" -tf '#arcmax(),#add()' -o dg.aa -q
same dg.aa "$md/directed.max"
# #arcsub() alone leaves negative weights: refused, as any negative weight
expect_rc 1 "$dsmm" mcl "$dg" -tf '#arcsub()' -o dg.neg -q
expect_grep "$tmp/err" "has weight -[0-9.]+ after -tf '#arcsub\\(\\)' \\(weights must be finite and >= 0"
expect_none dg.neg
expect_rc 2 "$dsmm" mcl "$dg" -tf '#step()' -o dg.step -q
expect_grep "$tmp/err" "'#step': this graph-wide transform of mcl's is not supported"
expect_none dg.step

# --- -overlap split on an iterate far from its limit (-L 1, -L 4: many vertices in overlap),
# as mcl 22-282 splits: vertices in overlap go together when two clusters both hold them,
# transitively (at -L 4 a vertex reaching three systems joins one reaching two of them)
for L in 1 4; do
    zcat "$md/collins.L$L-split.gz" >"ref.L$L"
    expect_rc 0 "$dsmm" mcl "$collins" --abc -L "$L" -overlap split -o "split.L$L" -q
    same "split.L$L" "ref.L$L"
done

# --- --discard-loops: the input's loops replaced (y, mcl's default) or kept as stored, times
# |c|, with none added (n); references: mcl 22-282 on collins with 672 loops appended
zcat "$collins" "$md/collins.loops.gz" >loops.abc
zcat "$md/collins-loops.dl-n.gz" >ref.dln
zcat "$md/collins-loops.dl-n-c2-I4.gz" >ref.dlnc2
zcat "$md/collins-loops.dl-y.gz" >ref.dly
expect_rc 0 "$dsmm" mcl loops.abc --abc --discard-loops=n -o dl.n -q
same dl.n ref.dln
expect_rc 0 "$dsmm" mcl loops.abc --abc -discard-loops n -c 2 -I 4 -o dl.nc2 -q
same dl.nc2 ref.dlnc2
expect_rc 0 "$dsmm" mcl loops.abc --abc --discard-loops=y -o dl.y -q
same dl.y ref.dly
expect_rc 0 "$dsmm" mcl loops.abc --abc -o dl.default -q
same dl.default ref.dly
expect_rc 0 "$dsmm" mcl loops.abc --abc --discard-loops=n -c 0 -pi 1.5 --analyze=y -o dl.an -q
analyzed dl.an "$md/collins-loops-c0-pi15.analyze"
# vertices without a stored loop get none: e and f, joined by one edge, stay apart
expect_rc 0 "$dsmm" mcl "$md/loops.abc" --abc --discard-loops=n -o dl.small -q
same dl.small "$md/loops.dl-n"
expect_rc 0 "$dsmm" mcl "$md/loops.abc" --abc --discard-loops=n -c 3 -o dl.small3 -q
same dl.small3 "$md/loops.dl-n-c3"
# mcl drops the loops as it reads (y), before -tf: #knn(10) on the graph with loops is #knn(10)
# on collins (bundled mcl reference); with n, #knn counts them (mcl 22-282, bundled)
expect_rc 0 "$dsmm" mcl loops.abc --abc -tf '#knn(10)' -o dl.knn -q
same dl.knn ref.knn
zcat "$md/collins-loops.dl-n-knn5.gz" >ref.dlknn
expect_rc 0 "$dsmm" mcl loops.abc --abc --discard-loops=n -tf '#knn(5)' -o dl.nknn -q
same dl.nknn ref.dlknn
# a checkpoint made with n is not resumed with y (another start matrix)
expect_rc 0 "$dsmm" mcl "$md/loops.abc" --abc --discard-loops=n -L 1 --checkpoint dl.ck -o dl.ck.out -q
expect_rc 1 "$dsmm" mcl "$md/loops.abc" --abc --resume dl.ck -o dl.rs.out -q
expect_none dl.rs.out
expect_rc 0 "$dsmm" mcl "$md/loops.abc" --abc --discard-loops=n --resume dl.ck -o dl.rs.out -q
same dl.rs.out "$md/loops.dl-n"
expect_rc 2 "$dsmm" mcl loops.abc --abc --discard-loops=maybe -o dl.bad -q
expect_grep "$tmp/err" "discard-loops: 'maybe' is not y or n"
expect_none dl.bad

# --- -icl: subclustering (mcl's block partition; reference: mcl 22-282 on the same graph as
# .mci with the I = 1.4 clustering as -icl, written with -use-tab labels)
zcat "$md/collins.icl14-I4.gz" >ref.icl
expect_rc 0 "$dsmm" mcl "$collins" --abc -icl ref.1.4 -I 4 -o icl.out -q
if [ "$(sort icl.out)" = "$(sort ref.icl)" ]; then ok; else bad "-icl differs from mcl's"; fi
expect_rc 0 "$dsmm" clm dist ref.icl icl.out
expect_grep "$tmp/out" '^d=0	'
expect_rc 0 "$dsmm" mcl "$collins" --abc -icl ref.1.4 -I 4 -az
if [ "$(cat "$tmp/out")" = "ref.1.4.I40" ]; then ok; else bad "-icl -az: $(cat "$tmp/out")"; fi
printf 'no-such-protein\n' >bad.icl
expect_rc 1 "$dsmm" mcl "$collins" --abc -icl bad.icl -o icl.bad -q
expect_grep "$tmp/err" "'no-such-protein' is not among the 1622 known nodes"
expect_none icl.bad
expect_rc 1 "$dsmm" mcl "$collins" --abc -icl no/such.file -o icl.bad -q
expect_none icl.bad

# --- several ranks, phases --------------------------------------------------------------------
if "$dsmm" --version | grep -q "MPI: yes" && mpi_found; then
    mpi_launcher
    expect_rc 0 "${mpi[@]}" -n 2 "$dsmm" mcl "$collins" --abc -o p2.out -q --stats p2.json
    same p2.out ref.2.0
    expect_rc 0 "${mpi[@]}" -n 4 "$dsmm" mcl "$collins" --abc -I 4 -o p4.out -q --stats p4.json
    same p4.out ref.4.0
    # The graph-wide transforms, distributed by rows (#ceilnb's greedy on rank 0).
    expect_rc 0 "${mpi[@]}" -n 3 "$dsmm" mcl "$collins" --abc -tf '#knn(10)' -o knn3.out -q
    same knn3.out ref.knn
    expect_rc 0 "${mpi[@]}" -n 2 "$dsmm" mcl "$collins" --abc -tf 'gq(0.3),#ceilnb(20),#knnj(6)' -I 1.4 -o gtf2.out -q --expand dist
    same gtf2.out ref.gtf
    # Overlap and connectivity with the rows on several ranks (replicated and distributed).
    expect_rc 0 "${mpi[@]}" -n 3 "$dsmm" mcl "$md/lines.abc" --abc -I 2 -overlap keep -sort lex -o lines3.kl -q
    same lines3.kl "$md/lines.keep-lex"
    expect_rc 0 "${mpi[@]}" -n 2 "$dsmm" mcl "$md/lines.abc" --abc -I 2 -overlap split -o lines2.split -q --expand dist
    same lines2.split "$md/lines.split"
    expect_rc 0 "${mpi[@]}" -n 4 "$dsmm" mcl "$md/bipartite.abc" --abc -c 0.2 -I 1.4 --force-connected=y -o bip4.fc -q
    same bip4.fc "$md/bipartite.fc"
    expect_rc 0 "${mpi[@]}" -n 2 "$dsmm" mcl "$md/bipartite.abc" --abc -c 0.2 -I 1.4 --force-connected=y --resume bipck -o bip2.res -q
    same bip2.res "$md/bipartite.fc"
    expect_rc 0 "${mpi[@]}" -n 3 "$dsmm" mcl "$md/mixed.etc.gz" --etc --expect-values -I 1.4 -o etc3.out -q
    same etc3.out "$md/mixed.etc.I14"
    # -icl's block partition with the rows on several ranks (the arcs' transposes exchanged)
    expect_rc 0 "${mpi[@]}" -n 3 "$dsmm" mcl "$collins" --abc -icl ref.1.4 -I 4 -o icl3.out -q --expand dist
    expect_rc 0 "$dsmm" clm dist ref.icl icl3.out
    expect_grep "$tmp/out" '^d=0	'
    # the transpose joins with the rows on several ranks
    expect_rc 0 "${mpi[@]}" -n 3 "$dsmm" mcl "$dg" -tf '#max()' -o dg3.max -q
    same dg3.max "$md/directed.max"
    expect_rc 0 "${mpi[@]}" -n 4 "$dsmm" mcl "$dg" -tf '#min(),gq(1)' -o dg4.min -q --expand dist
    same dg4.min "$md/directed.mingq1"
    expect_rc 0 "${mpi[@]}" -n 3 "$dsmm" mcl "$dg" -tf '#tug()' -o dg3.tug -q
    same dg3.tug "$md/directed.tug"
    # -overlap split far from the limit with the rows on several ranks
    expect_rc 0 "${mpi[@]}" -n 3 "$dsmm" mcl "$collins" --abc -L 1 -overlap split -o split3.L1 -q
    same split3.L1 ref.L1
    expect_rc 0 "${mpi[@]}" -n 2 "$dsmm" mcl "$collins" --abc -L 4 -overlap split -o split2.L4 -q --expand dist
    same split2.L4 ref.L4
    # --discard-loops=n with the rows on several ranks, replicated and distributed
    expect_rc 0 "${mpi[@]}" -n 2 "$dsmm" mcl loops.abc --abc --discard-loops=n -o dl2.n -q
    same dl2.n ref.dln
    expect_rc 0 "${mpi[@]}" -n 4 "$dsmm" mcl loops.abc --abc --discard-loops=n -c 2 -I 4 -o dl4.nc2 -q --expand dist
    same dl4.nc2 ref.dlnc2
    expect_rc 0 "${mpi[@]}" -n 3 "$dsmm" mcl loops.abc --abc --discard-loops=n -c 0 -pi 1.5 --analyze=y -o dl3.an -q
    analyzed dl3.an "$md/collins-loops-c0-pi15.analyze"
    # --analyze with the start matrix's rows on several ranks (sums added over them)
    expect_rc 0 "${mpi[@]}" -n 3 "$dsmm" mcl "$collins" --abc --analyze=y -o an3.out -q
    analyzed an3.out "$md/collins.analyze"
    expect_rc 0 "${mpi[@]}" -n 2 "$dsmm" mcl "$md/lines.abc" --abc --analyze=y -overlap keep -o an2.keep -q --expand dist
    analyzed an2.keep "$md/lines-keep.analyze"
    if [ "$(tr -s ' \n' '  ' <bip4.fc-rags)" = "$(tr -s ' \n' '  ' <"$md/bipartite.fc-rags")" ]; then ok; else bad "bip4.fc-rags differs from mcl's"; fi
    # Small graphs replicate the iterate (auto); --expand dist and SUMMA's options take SUMMA.
    expect_rc 0 "${mpi[@]}" -n 3 "$dsmm" mcl "$collins" --abc -o d3.out -q --expand dist --stats d3.json
    same d3.out ref.2.0
    expect_rc 0 "${mpi[@]}" -n 2 "$dsmm" mcl "$collins" --abc -o a2.out -q --accumulate merge --stats a2.json
    same a2.out ref.2.0
    # The replicated expansion is one rank's arithmetic: the same products, iteration by
    # iteration, as the one-rank run of s.json; bytes were sent, and each record names its way.
    if python3 -c 'import json,sys
R,D,A,P2,S=[json.load(open(f)) for f in sys.argv[1:6]]
r,d,a=R["iterations"],D["iterations"],A["iterations"]
assert all(i["expand"]=="replicated" and "estimator" not in i for i in r)
assert all(i["expand"]=="dist" and i["estimator"] in ("exact","cohen") for i in d+a)
comp=("comp_seconds","comm_seconds","acc_seconds","wait_seconds")
assert all(0 <= i[k] <= i["seconds"] + 0.02 for i in d+a for k in comp), [[i.get(k) for k in comp] for i in d]
assert not any(k in i for i in r for k in comp)
assert (R["algo"],D["algo"],A["algo"])==("replicated","summa","summa") and R["ranks"]==4 and D["ranks"]==3
assert [i["flops"] for i in P2["iterations"]]==[i["flops"] for i in S["iterations"]]
assert P2["flops"]==S["flops"] and P2["nnz_in"]==S["nnz_in"] and all(x["bytes_sent"]>0 for x in (R,D,A,P2))' p4.json d3.json a2.json p2.json s.json 2>"$tmp/pyerr"; then
        ok
    else
        bad "--expand stats: $(head -c 300 "$tmp/pyerr")"
    fi
    # dsmm report shows the distributed iterations' components, and "-" for replicated ones.
    expect_rc 0 "$dsmm" report d3.json p4.json
    expect_grep "$tmp/out" '^ +2 +[0-9.]+ +[0-9.e+]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9.e+-]+ +dist +[0-9]+\.[0-9]{4} +[0-9]+\.[0-9]{4} '
    expect_grep "$tmp/out" '^ +2 +[0-9.]+ +[0-9.e+]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9.e+-]+ +replicated +- +- +- +-$'
    expect_rc 0 "${mpi[@]}" -n 2 "$dsmm" mcl "$collins" --abc -o ph.out -q --phases 3 --accumulate binary
    same ph.out ref.2.0
    # How the expansion is sized: the exact count, Cohen's estimator, auto's choice per iteration.
    for e in exact 5 auto; do
        expect_rc 0 "${mpi[@]}" -n 2 "$dsmm" mcl "$collins" --abc -o e$e.out -q --expand dist --estimate $e --stats e$e.json
        same e$e.out ref.2.0
    done
    if python3 -c 'import json,sys
x,c,a=[json.load(open(f))["iterations"] for f in sys.argv[1:4]]
assert all(i["estimator"]=="exact" and i["estimate_keys"]==0 and i["est_bytes"]*2/24 >= i["nnz_expand"] for i in x)
assert all(i["estimator"]=="cohen" and i["estimate_keys"]==5 for i in c)
assert all(i["estimate_keys"]==(0 if i["flops"] < 32*i["nnz_in"] else 8) for i in a)
assert {i["estimator"] for i in a}=={"exact","cohen"}' eexact.json e5.json eauto.json 2>"$tmp/pyerr"; then
        ok
    else
        bad "--estimate stats: $(head -c 300 "$tmp/pyerr")"
    fi
    # --mem caps every rank's allocations under mpirun too: exit 1, no file.
    expect_rc 1 "${mpi[@]}" -n 2 "$dsmm" mcl "$collins" --abc --mem 200K -o capped2.out
    expect_grep "$tmp/err" 'exceeds the memory budget'
    expect_none capped2.out
    expect_rc 1 "${mpi[@]}" -n 2 "$dsmm" mcl "$collins" --abc -o small.out --per-process-mem 10K
    expect_grep "$tmp/err" 'too small'
    expect_none small.out
else
    echo "no MPI or no mpirun: multi-rank cases skipped"
fi

# --- planted partition: recovered --------------------------------------------------------------
expect_rc 0 "$dsmm" gen planted -n 400 --blocks 4 --p-in 0.15 --p-out 0.005 --seed 3 -o pl.mtx --truth pl.truth
expect_rc 0 "$dsmm" mcl pl.mtx -o pl.out -q -base 0
expect_rc 0 "$dsmm" clm dist --index pl.truth pl.out
if python3 -c 'import re,sys; t=open(sys.argv[1]).read(); m=re.search(r"arand=([0-9.]+)", t); assert m and float(m.group(1)) > 0.9, t' "$tmp/out" 2>"$tmp/pyerr"; then
    ok
else
    bad "planted partition: $(head -c 300 "$tmp/pyerr")"
fi

# --- bad input -----------------------------------------------------------------------------------
expect_rc 2 "$dsmm" mcl "$collins" --abc --bogus
expect_grep "$tmp/err" "unknown option '--bogus'"
expect_rc 2 "$dsmm" mcl
expect_grep "$tmp/err" 'no INPUT'
expect_rc 2 "$dsmm" mcl "$collins" --abc -I 0
expect_rc 2 "$dsmm" mcl "$collins" --abc -I abc
expect_rc 2 "$dsmm" mcl "$collins" --abc -scheme 8
expect_rc 2 "$dsmm" mcl "$collins" --abc -pct 100
expect_rc 2 "$dsmm" mcl "$collins" --abc --expand sideways -o est.out
expect_grep "$tmp/err" "expand: 'sideways' is not auto|fused|replicated|dist"
expect_rc 2 "$dsmm" mcl "$collins" --abc --estimate 2 -o est.out
expect_grep "$tmp/err" "estimate: '2' is not auto, exact or a key count"
expect_none est.out
expect_rc 2 "$dsmm" mcl "$collins" --abc -I 1.4,2 -o -
expect_rc 2 "$dsmm" mcl "$collins" --abc --gpu-resident --accumulate fused -o res.out
expect_grep "$tmp/err" "gpu-resident merges the stage products on the device"
expect_none res.out
expect_rc 1 "$dsmm" mcl missing.abc --abc -o m.out
expect_grep "$tmp/err" 'missing.abc'
expect_none m.out
printf 'a\tb\t0.5\nb\tc\tx7\n' >nonnum.abc
expect_rc 1 "$dsmm" mcl nonnum.abc --abc -o nn.out
expect_grep "$tmp/err" 'nonnum.abc:2'
expect_none nn.out
printf 'a\tb\t0.5\nb\tc\t-2\n' >neg.abc
expect_rc 1 "$dsmm" mcl neg.abc --abc -o neg.out
expect_grep "$tmp/err" 'weight'
expect_none neg.out
: >empty.abc
expect_rc 1 "$dsmm" mcl empty.abc --abc -o e.out
expect_grep "$tmp/err" 'no vertices|empty'
expect_none e.out
expect_rc 1 "$dsmm" mcl "$collins" --abc -o /nonexistent/dir/x.out
expect_rc 1 "$dsmm" mcl "$collins" --abc -o small1.out --per-process-mem 10K
expect_grep "$tmp/err" 'too small'
expect_none small1.out
# dsmm's common options: --threads and --quiet as -te and -q; --mem caps every allocation
# (an allocation beyond it fails: exit 1, no file); a bad size names its option.
expect_rc 0 "$dsmm" mcl "$collins" --abc --threads 1 --quiet -o common.out
same common.out ref.2.0
if grep -q ' ite ' "$tmp/err"; then bad "--quiet printed progress"; else ok; fi
expect_rc 1 "$dsmm" mcl "$collins" --abc --mem 200K -o capped.out
expect_grep "$tmp/err" 'exceeds the memory budget'
expect_none capped.out
expect_rc 0 "$dsmm" mcl "$collins" --abc --mem 1G -o roomy.out -q
same roomy.out ref.2.0
expect_rc 2 "$dsmm" mcl "$collins" --abc -o - --stats -
expect_grep "$tmp/err" 'cannot both use stdout'
expect_rc 2 "$dsmm" mcl "$collins" --abc --gpu-mem 12Q -o q.out
expect_grep "$tmp/err" "--gpu-mem: '12Q' is not a size"
expect_rc 2 "$dsmm" mcl "$collins" --abc --gpu-min-flops -5 -o q.out
expect_grep "$tmp/err" "--gpu-min-flops: '-5' is not a number in"
expect_none q.out
expect_none q.out

echo "test_cli_mcl: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
