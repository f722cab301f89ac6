# tests/cli/lib.sh: what the CLI test scripts share: a scratch directory removed on exit,
# pass/fail counting, and the closing "N passed, M failed" line.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() {
    fail=$((fail + 1))
    echo "FAIL: $*" >&2
}
