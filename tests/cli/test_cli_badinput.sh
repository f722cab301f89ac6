#!/bin/bash
# tests/cli/test_cli_badinput.sh: every malformed input of the bad-input catalogue
# (tests/io/test_badinput.c) through the dsmm command: `dsmm convert` and `dsmm info` must exit 1
# (a runtime failure, not a usage error or a signal) with the catalogued message, and convert
# must leave neither OUT nor a temporary file behind.
# usage: test_cli_badinput.sh DSMM_BINARY DATA_DIR TEST_BADINPUT_BINARY
set -u
dsmm=$1
badinput=$3
. "$(dirname "$0")/lib.sh"

"$badinput" --write "$tmp/bad" >"$tmp/write.log" 2>&1
rc=$?
if [ $rc -ne 0 ] || [ ! -s "$tmp/bad/expected.tsv" ]; then
    echo "FAIL: '$badinput --write' gave exit $rc and no catalogue: $(head -c 300 "$tmp/write.log")" >&2
    echo "0 passed, 1 failed"
    exit 1
fi

# check NAME SUBSTRING CMD...: CMD exits 1 with a 'dsmm <first word of NAME>: ' message
# containing SUBSTRING.
check() {
    local name=$1 sub=$2
    shift 2
    "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    if [ $rc -ne 1 ]; then
        bad "$name: exit $rc (want 1): $* :: $(head -c 300 "$tmp/err")"
        return
    fi
    if ! grep -q "^dsmm ${name%% *}: " "$tmp/err"; then
        bad "$name: message lacks the 'dsmm CMD: ' prefix: $(head -c 300 "$tmp/err")"
        return
    fi
    if grep -qF -- "$sub" "$tmp/err"; then ok; else
        bad "$name: stderr lacks '$sub': $(head -c 300 "$tmp/err")"
    fi
}

cases=0
while IFS=$'\t' read -r file sub || [ -n "$file" ]; do
    [ -z "$file" ] && continue
    cases=$((cases + 1))
    in="$tmp/bad/$file"
    rm -rf "$tmp/out.mtx" "$tmp"/out.mtx.tmp.*
    check "convert $file" "$sub" "$dsmm" convert "$in" "$tmp/out.mtx"
    if [ -e "$tmp/out.mtx" ]; then bad "convert $file: left $tmp/out.mtx"; else ok; fi
    if compgen -G "$tmp/out.mtx.tmp.*" >/dev/null; then bad "convert $file: left a temporary"; else ok; fi
    check "info $file" "$sub" "$dsmm" info "$in"
    if [ -s "$tmp/out" ]; then bad "info $file: printed a summary of a bad file"; else ok; fi
done <"$tmp/bad/expected.tsv"
if [ $cases -ge 1 ]; then ok; else bad "the catalogue is empty"; fi

echo "$cases catalogue cases"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
