#!/usr/bin/env bash
# scripts/valgrind.sh BUILD: every unit-test binary under valgrind memcheck, then the CLI test
# scripts with the dsmm binary run under it (their one-process cases: a wrapper reports no MPI,
# so the scripts skip their mpirun sections, where Open MPI's and PMIx's own reports would
# drown dsmm's). Errors and definite leaks fail; "possibly lost" blocks are libgomp's
# thread-pool stacks and are not reported; tests/valgrind.supp holds Open MPI's own leaks at
# MPI_Init (every test binary that runs the distributed layer initialises MPI). A test that
# skips (exit 77: no GPU) is reported as skipped.
set -uo pipefail
build=${1:-build/test}
rc=0
here=$(cd "$(dirname "$0")/.." && pwd)
supp="--suppressions=$here/tests/valgrind.supp"
for t in $(find "$build/tests" -maxdepth 2 -type f -name 'test_*' -perm -u+x | sort); do
  case "$t" in *test_comm*) continue ;; esac # MPI runtime: see tests/lsan.supp under ASan
  OMP_NUM_THREADS=2 valgrind -q --error-exitcode=9 --leak-check=full --num-callers=30 "$supp" \
    --errors-for-leak-kinds=definite --show-leak-kinds=definite "$t" >/tmp/valgrind.$$.log 2>&1
  case $? in
    0) echo "valgrind ok   $t" ;;
    77) echo "valgrind skip $t: $(tail -1 /tmp/valgrind.$$.log)" ;;
    *) echo "valgrind FAIL $t"; tail -30 /tmp/valgrind.$$.log; rc=1 ;;
  esac
done

# The CLI as users run it: a memcheck error makes dsmm exit 99, which no script expects.
bin=$(cd "$build" && pwd)/bin/dsmm
badinput=$(find "$build/tests" -type f -name test_badinput | head -1)
badinput=$(cd "$(dirname "$badinput")" && pwd)/test_badinput
vg=$(command -v valgrind) # absolute: test_cli_model runs dsmm with PATH=/nonexistent
wrap=$(mktemp -d)
{
  echo "#!$(command -v bash)" # absolute, as valgrind is
  echo "if [ \"\$1\" = --version ]; then \"$bin\" --version | sed 's/^MPI: yes\$/MPI: no/'; exit; fi"
  echo "exec \"$vg\" -q --error-exitcode=99 --leak-check=full --num-callers=30 $supp \\"
  echo "    --errors-for-leak-kinds=definite \\"
  echo "    --show-leak-kinds=definite \"$bin\" \"\$@\""
} >"$wrap/dsmm"
chmod +x "$wrap/dsmm"
for s in "$here"/tests/cli/test_cli_*.sh; do
  case "$s" in *test_cli_dist.sh) continue ;; esac # every case starts MPI
  OMP_NUM_THREADS=2 bash "$s" "$wrap/dsmm" "$here/tests/data" "$badinput" >/tmp/valgrind.$$.log 2>&1
  case $? in
    0) echo "valgrind ok   $(basename "$s"): $(tail -1 /tmp/valgrind.$$.log)" ;;
    77) echo "valgrind skip $(basename "$s"): $(tail -1 /tmp/valgrind.$$.log)" ;;
    *) echo "valgrind FAIL $(basename "$s")"; grep -A3 '^FAIL' /tmp/valgrind.$$.log | head -40; rc=1 ;;
  esac
done
rm -rf "$wrap" /tmp/valgrind.$$.log
exit $rc
