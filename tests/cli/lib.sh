# tests/cli/lib.sh: what the CLI test scripts share: a scratch directory removed on exit,
# pass/fail counting, the MPI launcher, and the checks expect_rc, expect_grep, expect_none and
# arr_same.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() {
    fail=$((fail + 1))
    echo "FAIL: $*" >&2
}

# mpi_launcher [VAR...] and mpi_found: scripts/mpi.sh (the launch command, with Open MPI's flags
# only when mpirun is Open MPI's).
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/mpi.sh"

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

# arr_same WANT GOT [RTOL]: two array files of the same shape whose values agree within RTOL (relative
# to the larger magnitude, plus the same absolute amount near zero). RTOL 0: exactly equal.
arr_same() {
    local rtol=${3:-1e-12}
    if awk -v rtol="$rtol" '
        FNR == 1 { f++; h = 0; n = 0; next }
        /^%/ { next }
        !h { dims[f] = $0; h = 1; next }
        f == 1 { w[++n] = $1; next }
        { n++; d = $1 - w[n]; if (d < 0) d = -d; s = ($1 < 0 ? -$1 : $1); t = (w[n] < 0 ? -w[n] : w[n])
          if (t > s) s = t; if (d > rtol * (s + 1)) { printf "entry %d: %s, want %s\n", n, $1, w[n]; failed = 1; exit 1 }
          got = n }
        END { if (failed) exit 1
              if (dims[1] != dims[2]) { printf "dims %s, want %s\n", dims[2], dims[1]; exit 1 }
              if (got != length(w)) { printf "%d values, want %d\n", got, length(w); exit 1 } }
    ' "$1" "$2" >"$tmp/arr_same.log" 2>&1; then ok; else bad "$2 vs $1: $(head -c 300 "$tmp/arr_same.log")"; fi
}
