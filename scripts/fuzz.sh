#!/usr/bin/env bash
# scripts/fuzz.sh BUILD SECONDS: runs every libFuzzer target for SECONDS each (in parallel),
# starting from the checked-in corpus; new crashers land in the working directory. The targets
# run side by side: on a 2-core machine give each SECONDS accordingly.
set -euo pipefail
build=$1
secs=${2:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
pids=()
targets="mtx abc read clusters json"
for t in $targets; do
  work=$(mktemp -d)
  cp "$root"/tests/fuzz/corpus/$t/* "$work"/ 2>/dev/null || true
  "$build/tests/fuzz/fuzz_$t" "$work" -max_total_time="$secs" -rss_limit_mb=2048 \
    -print_final_stats=1 >"fuzz-$t.log" 2>&1 &
  pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
for t in $targets; do
  echo "fuzz_$t: $(grep -E 'stat::number_of_executed_units' fuzz-$t.log || echo '?')"
  grep -E 'ERROR|crash' "fuzz-$t.log" | head -5 || true
done
exit $rc
