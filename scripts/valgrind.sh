#!/usr/bin/env bash
# scripts/valgrind.sh BUILD: every unit-test binary under valgrind memcheck. Errors and definite
# leaks fail; "possibly lost" blocks are libgomp's thread-pool stacks and are not reported.
set -uo pipefail
build=${1:-build/test}
rc=0
for t in $(find "$build/tests" -maxdepth 2 -type f -name 'test_*' -perm -u+x | sort); do
  case "$t" in *test_comm*) continue ;; esac # MPI runtime: see tests/lsan.supp under ASan
  if OMP_NUM_THREADS=2 valgrind -q --error-exitcode=9 --leak-check=full \
      --errors-for-leak-kinds=definite --show-leak-kinds=definite "$t" >/tmp/valgrind.$$.log 2>&1; then
    echo "valgrind ok   $t"
  else
    echo "valgrind FAIL $t"; tail -30 /tmp/valgrind.$$.log; rc=1
  fi
done
rm -f /tmp/valgrind.$$.log
exit $rc
