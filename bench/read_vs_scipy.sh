#!/bin/bash
# bench/read_vs_scipy.sh: dsmm_read vs scipy.io.mmread on ego-twitter-undirected (15.1 MB of
# Matrix Market text, 1.34M stored entries, 2.68M nonzeros). Prints one JSON line.
# Usage: bench/read_vs_scipy.sh [BUILD_DIR (build)] [THREADS (2)]
# Needs ../shared/data/graphs/ego-twitter-undirected.mtx.gz next to the repository, the
# bench_read program (cmake --build BUILD_DIR --target bench_read; use a Release build) and
# Debian's python3-scipy at /usr/bin/python3.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$repo/build}
threads=${2:-2}
gz=$repo/../shared/data/graphs/ego-twitter-undirected.mtx.gz
if [ ! -f "$gz" ]; then
  echo "read_vs_scipy: skipped: $gz not found" >&2
  exit 0
fi
bench=$build/bench/bench_read
if [ ! -x "$bench" ]; then
  echo "read_vs_scipy: $bench not built (cmake --build $build --target bench_read)" >&2
  exit 1
fi
py=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mtx=$tmp/ego-twitter-undirected.mtx
gzip -dc "$gz" > "$mtx"

dsmm_line=$("$bench" "$mtx" 5 "$threads")
dsmm_gz_line=$("$bench" "$gz" 5 "$threads")
field() { sed -n "s/.*\"$1\":\([0-9.]*\).*/\1/p" <<<"$2"; }
dsmm_s=$(field median_s "$dsmm_line")
dsmm_gz_s=$(field median_s "$dsmm_gz_line")
bytes=$(field bytes "$dsmm_line")

if ! scipy_s=$("$py" - "$mtx" <<'PY'
import sys, time, statistics
import scipy, scipy.io
path = sys.argv[1]
times = []
for _ in range(3):
    t0 = time.perf_counter()
    A = scipy.io.mmread(path)
    times.append(time.perf_counter() - t0)
print("%.6f %s %d" % (statistics.median(times), scipy.__version__, A.nnz))
PY
); then
  echo "read_vs_scipy: $py cannot run scipy.io.mmread" >&2
  exit 1
fi
read -r scipy_med scipy_ver scipy_nnz <<<"$scipy_s"
awk -v b="$bytes" -v d="$dsmm_s" -v g="$dsmm_gz_s" -v s="$scipy_med" -v t="$threads" \
    -v v="$scipy_ver" -v n="$scipy_nnz" -v h="$(hostname)" -v c="$(nproc)" 'BEGIN {
  printf("{\"bench\":\"read_vs_scipy\",\"file\":\"ego-twitter-undirected.mtx\",\"host\":\"%s\"," \
         "\"cpus\":%d,\"bytes\":%d,\"threads\":%d,\"dsmm_median_s\":%.4f,\"dsmm_mb_per_s\":%.1f," \
         "\"dsmm_gz_median_s\":%.4f,\"dsmm_gz_mb_per_s\":%.1f,\"scipy\":\"%s\"," \
         "\"scipy_nnz\":%d,\"scipy_median_s\":%.4f,\"scipy_mb_per_s\":%.1f," \
         "\"speedup_vs_scipy\":%.1f}\n",
         h, c, b, t, d, b / 1e6 / d, g, b / 1e6 / g, v, n, s, b / 1e6 / s, s / d)
}'
