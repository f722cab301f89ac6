# tests/cli/lib.sh: what the CLI test scripts share: a scratch directory removed on exit,
# pass/fail counting, and the checks expect_rc, expect_grep and expect_none.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() {
    fail=$((fail + 1))
    echo "FAIL: $*" >&2
}

# expect_rc RC CMD...: runs CMD, stdout to $tmp/out, stderr to $tmp/err; checks the exit code.
expect_rc() {
    local want=$1
    shift
    "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    if [ "$rc" -eq "$want" ]; then ok; else bad "exit $rc (want $want): $* :: $(head -c 400 "$tmp/err")"; fi
}

# expect_grep FILE REGEX: FILE has a line matching REGEX (extended).
expect_grep() {
    if grep -Eq -- "$2" "$1"; then ok; else bad "$1 lacks /$2/: $(head -c 400 "$1")"; fi
}

# expect_none FILE...: none of the files exists (nor a temporary next to it).
expect_none() {
    local f
    for f in "$@"; do
        if [ -e "$f" ] || compgen -G "$f.tmp.*" >/dev/null; then bad "$f was left behind"; else ok; fi
    done
}
