#!/bin/bash
# tests/cli/test_cli_report.sh: `dsmm report` on the hand-made record tests/data/stats-summa-4.json
# (4 ranks, 2 stages; averages comp 2, comm 0.5, acc 0.125, wait 1.25; flops max/avg 1.5, stages
# 1.5 and 2.5, weighted mean 2): the header, the Table 2 row, the per-rank rows and the imbalance
# line exactly; the same as JSON lines; several records (one file with several, several files,
# standard input) and the summary; a real non-distributed record (`dsmm info --stats`); string
# escapes; and bad input (missing file, empty, truncated, syntax error, an array, missing stable
# keys, missing ranks_detail, wrong types and counts, deep nesting, usage): exit 1 (2 for usage),
# the file named in the message, nothing on stdout.
# usage: test_cli_report.sh DSMM_BINARY DATA_DIR [TEST_BADINPUT_BINARY (unused)]
set -u
dsmm=$1
data=$2
. "$(dirname "$0")/lib.sh"
fx=$data/stats-summa-4.json

# expect_line FILE TEXT: FILE has a line that is exactly TEXT.
expect_line() {
    if grep -Fxq -- "$2" "$1"; then ok; else bad "$1 lacks the line '$2': $(head -c 400 "$1")"; fi
}

# expect_count FILE REGEX N: exactly N lines of FILE match REGEX.
expect_count() {
    local n
    n=$(grep -Ec -- "$2" "$1")
    if [ "$n" -eq "$3" ]; then ok; else bad "$1: $n lines match /$2/, want $3"; fi
}

expect_empty() {
    if [ ! -s "$1" ]; then ok; else bad "$1 is not empty: $(head -c 300 "$1")"; fi
}

# bad_input NAME REGEX: `dsmm report FILE` fails with exit 1, prints nothing, and its one-line
# message names the file and matches REGEX.
bad_input() {
    expect_rc 1 "$dsmm" report "$1"
    expect_empty "$tmp/out"
    expect_count "$tmp/err" '.' 1
    expect_grep "$tmp/err" "^dsmm report: (cannot open )?$(printf '%s' "$1" | sed 's/[.[\*^$]/\\&/g')[: ].*$2"
}

# --- one record, text ---
expect_rc 0 "$dsmm" report "$fx"
expect_empty "$tmp/err"
cp "$tmp/out" "$tmp/one.txt"
expect_line "$tmp/one.txt" "== $fx #1: spgemm summa, ranks 4, grid 2x2, threads 2, seconds 3.875000, flops 1600, nnz 120 -> 90, sent 0.008500 GB"
expect_grep "$tmp/one.txt" '^  Alg\. +Ranks +Comp\. +Comm\. +Acc\. +Load Imb\. '
expect_grep "$tmp/one.txt" '^  summa +4 +2\.000000 +0\.500000 +0\.125000 +1\.250000$'
expect_grep "$tmp/one.txt" '^ +rank +wg +comp +comm +acc +wait +total +flops +MB recv intra +MB recv inter +msgs sent +msgs recv$'
# rank wg comp comm acc wait total flops MB-intra MB-inter msgs-sent msgs-recv
expect_grep "$tmp/one.txt" '^ +0 +0 +3\.000000 +0\.500000 +0\.125000 +0\.250000 +3\.875000 +600 +2\.000000 +1\.000000 +3 +4$'
expect_grep "$tmp/one.txt" '^ +1 +0 +2\.000000 +0\.250000 +0\.125000 +1\.500000 +3\.875000 +400 +1\.500000 +0\.500000 +4 +3$'
expect_grep "$tmp/one.txt" '^ +2 +2 +2\.000000 +0\.750000 +0\.125000 +1\.000000 +3\.875000 +400 +0\.000000 +3\.000000 +3 +3$'
expect_grep "$tmp/one.txt" '^ +3 +2 +1\.000000 +0\.500000 +0\.125000 +2\.250000 +3\.875000 +200 +0\.500000 +0\.000000 +2 +2$'
expect_count "$tmp/one.txt" '^ +[0-9]+ +[0-9]+ +[0-9.]+ ' 4
expect_line "$tmp/one.txt" '  imbalance (flops max/avg): end to end 1.5000, worst stage 2.5000, mean stage 2.0000'
expect_count "$tmp/one.txt" 'summary' 0
# standard input reads the same
expect_rc 0 "$dsmm" report - <"$fx"
expect_line "$tmp/out" "== - #1: spgemm summa, ranks 4, grid 2x2, threads 2, seconds 3.875000, flops 1600, nnz 120 -> 90, sent 0.008500 GB"
expect_grep "$tmp/out" '^  summa +4 +2\.000000 +0\.500000 +0\.125000 +1\.250000$'

# --- one record, JSON lines ---
expect_rc 0 "$dsmm" report --json "$fx"
cp "$tmp/out" "$tmp/one.jsonl"
expect_count "$tmp/one.jsonl" '.' 7
expect_count "$tmp/one.jsonl" '^\{"table":"[a-z]+","file":"[^"]*","record":1,.*\}$' 7
expect_line "$tmp/one.jsonl" '{"table":"record","file":"'"$fx"'","record":1,"op":"spgemm","algo":"summa","ranks":4,"grid":"2x2","threads":2,"seconds":3.875,"flops":1600,"nnz_in":120,"nnz_out":90,"bytes_sent":8500000,"breakdown":true}'
expect_line "$tmp/one.jsonl" '{"table":"components","file":"'"$fx"'","record":1,"algo":"summa","ranks":4,"comp":2,"comm":0.5,"acc":0.125,"load_imb":1.25}'
expect_line "$tmp/one.jsonl" '{"table":"rank","file":"'"$fx"'","record":1,"rank":2,"workgroup":2,"comp":2,"comm":0.75,"acc":0.125,"wait":1,"total":3.875,"flops":400,"bytes_recv_intra":0,"bytes_recv_inter":3000000,"msgs_sent":3,"msgs_recv":3}'
expect_count "$tmp/one.jsonl" '^\{"table":"rank",' 4
expect_line "$tmp/one.jsonl" '{"table":"imbalance","file":"'"$fx"'","record":1,"flops_max_over_avg":1.5,"stage_max_over_avg_worst":2.5,"stage_max_over_avg_mean":2}'
expect_count "$tmp/one.jsonl" '"table":"summary"' 0

# --- several records: one file with three (two distributed, one local from dsmm info) ---
tr -d '\n' <"$fx" >"$tmp/multi.json"
echo >>"$tmp/multi.json"
tr -d '\n' <"$fx" | sed 's/"algo": "summa"/"algo": "summa-pf"/; s/"seconds": 3.875/"seconds": 3.5/; s/"comm": 0.75,/"comm": 1.75,/' >>"$tmp/multi.json"
echo >>"$tmp/multi.json"
expect_rc 0 "$dsmm" info "$data/cora.adj.mtx.gz" --stats "$tmp/info.json" -q
cat "$tmp/info.json" >>"$tmp/multi.json"
expect_rc 0 "$dsmm" report "$tmp/multi.json"
cp "$tmp/out" "$tmp/multi.txt"
expect_count "$tmp/multi.txt" '^== ' 4
expect_grep "$tmp/multi.txt" "^== .*multi\.json #1: spgemm summa, ranks 4, grid 2x2, "
expect_grep "$tmp/multi.txt" "^== .*multi\.json #2: spgemm summa-pf, ranks 4, grid 2x2, threads 2, seconds 3\.500000, "
expect_grep "$tmp/multi.txt" "^== .*multi\.json #3: info -, ranks 1, grid -, threads [0-9]+, seconds [0-9.]+, flops 0, nnz 10556 -> 0, sent 0\.000000 GB$"
expect_count "$tmp/multi.txt" '^  no per-rank breakdown \(not a distributed operation\)$' 1
expect_grep "$tmp/multi.txt" '^  summa-pf +4 +2\.000000 +0\.750000 +0\.125000 +1\.250000$'
expect_line "$tmp/multi.txt" '== summary (3 records)'
expect_grep "$tmp/multi.txt" '^  op +algo +ranks +grid +seconds +comp +comm +acc +imb$'
expect_grep "$tmp/multi.txt" '^  spgemm +summa +4 +2x2 +3\.875000 +2\.000000 +0\.500000 +0\.125000 +1\.250000$'
expect_grep "$tmp/multi.txt" '^  spgemm +summa-pf +4 +2x2 +3\.500000 +2\.000000 +0\.750000 +0\.125000 +1\.250000$'
expect_grep "$tmp/multi.txt" '^  info +- +1 +- +[0-9.]+ +- +- +- +-$'
expect_rc 0 "$dsmm" report --json "$tmp/multi.json"
expect_count "$tmp/out" '"table":"summary"' 3
expect_count "$tmp/out" '"table":"record"' 3
expect_count "$tmp/out" '"table":"rank"' 8
expect_grep "$tmp/out" '^\{"table":"summary","file":"[^"]*multi\.json","record":2,"op":"spgemm","algo":"summa-pf","ranks":4,"grid":"2x2","seconds":3\.5,"comp":2,"comm":0\.75,"acc":0\.125,"imb":1\.25\}$'
expect_grep "$tmp/out" '^\{"table":"summary","file":"[^"]*multi\.json","record":3,"op":"info","algo":"","ranks":1,"grid":null,"seconds":[0-9.e-]+,"comp":null,"comm":null,"acc":null,"imb":null\}$'
expect_grep "$tmp/out" '^\{"table":"record",.*"record":3,"op":"info",.*"breakdown":false\}$'
# several files: two records, one summary
expect_rc 0 "$dsmm" report "$fx" "$fx"
expect_count "$tmp/out" '^== ' 3
expect_line "$tmp/out" '== summary (2 records)'
expect_count "$tmp/out" '^  spgemm +summa +4 +2x2 +3\.875000 ' 2

# --- string escapes are decoded ---
sed 's/"algo": "summa"/"algo": "a\\"b\\\\c\\u00e9\\ud83d\\ude00\\t"/' "$fx" >"$tmp/esc.json"
expect_rc 0 "$dsmm" report "$tmp/esc.json"
expect_grep "$tmp/out" "#1: spgemm a\"b\\\\cé😀	, ranks 4"

# --- bad input: exit 1, the file named, nothing printed for it ---
bad_input "$tmp/nope.json" 'No such file'
: >"$tmp/empty.json"
bad_input "$tmp/empty.json" 'no JSON record \(the file is empty\)'
head -n 2 "$fx" >"$tmp/trunc.json"
n=$(wc -c <"$tmp/trunc.json")
bad_input "$tmp/trunc.json" "line 3, column 1 \(byte $n\): unexpected end of input, expected a string key"
head -c 300 "$fx" >"$tmp/trunc2.json"
bad_input "$tmp/trunc2.json" 'line [0-9]+, column [0-9]+ \(byte [0-9]+\): (unterminated string|unexpected end of input)'
sed 's/"prefetch": 0,/"prefetch": 0 0,/' "$fx" >"$tmp/syntax.json"
bad_input "$tmp/syntax.json" "line 3, column 31 \(byte [0-9]+\): unexpected '0', expected ',' or '\}' in an object"
echo '[1, 2]' >"$tmp/array.json"
bad_input "$tmp/array.json" 'record 1 \(line 1\): a JSON array, expected an object'
sed '/"ranks_detail"/,/^ \],$/d' "$fx" >"$tmp/nodetail.json"
bad_input "$tmp/nodetail.json" "record 1 \(line 1\): missing key 'ranks_detail'"
sed 's/"seconds": 3.875, //' "$fx" >"$tmp/noseconds.json"
bad_input "$tmp/noseconds.json" "missing key 'seconds'"
sed 's/"ranks": 4,/"ranks": "4",/' "$fx" >"$tmp/strranks.json"
bad_input "$tmp/strranks.json" "'ranks' is a string, expected a number"
sed 's/"ranks": 4,/"ranks": 5,/' "$fx" >"$tmp/fiveranks.json"
bad_input "$tmp/fiveranks.json" 'ranks_detail has 4 entries but ranks is 5'
sed 's/"rank": 2, "workgroup": 2, "comp": 2,/"rank": 2, "workgroup": 2,/' "$fx" >"$tmp/nocomp.json"
bad_input "$tmp/nocomp.json" "missing key 'ranks_detail\[2\]\.comp'"
echo '{"op": "x", "algo": "y", "ranks": 1, "threads": 1, "seconds": 1, "io_seconds": 0, "flops": 0, "nnz_in": 0, "nnz_out": 0, "peak_bytes": 0, "bytes_sent": 0, "x": "\q"}' >"$tmp/escape.json"
bad_input "$tmp/escape.json" "line 1, column 162 \(byte 161\): invalid escape '\\\\q'"
printf '%0.s[' $(seq 100) >"$tmp/deep.json"
bad_input "$tmp/deep.json" 'line 1, column 65 \(byte 64\): arrays and objects nested deeper than 64'
# a bad second record: nothing of the file is printed, not even the good first record
{ tr -d '\n' <"$fx"; echo; echo '{"op": "spgemm"}'; } >"$tmp/half.json"
bad_input "$tmp/half.json" "record 2 \(line 2\): missing key 'algo'"
# a good file and a bad one: the good one is printed, the bad one named, exit 1
expect_rc 1 "$dsmm" report "$fx" "$tmp/array.json"
expect_count "$tmp/out" '^== ' 1
expect_grep "$tmp/out" '^  summa +4 +2\.000000 '
expect_grep "$tmp/err" "^dsmm report: .*array\.json: record 1"

# --- usage ---
expect_rc 2 "$dsmm" report
expect_grep "$tmp/err" "^dsmm report: needs at least one FILE"
expect_rc 2 "$dsmm" report --bogus "$fx"
expect_grep "$tmp/err" "^dsmm report: unknown option '--bogus'"
expect_rc 0 "$dsmm" report --help
expect_grep "$tmp/out" '--json'
expect_rc 0 "$dsmm" --help
expect_grep "$tmp/out" '^  report '

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
