#!/usr/bin/env bash
# bench/gpu/resident.sh: a C tile's partial products merged on the host (each downloaded)
# against resident on the device (--gpu-resident: summed there, C's tile downloaded once), in
# one run on one machine, for SUMMA and the stationary-C one-sided algorithm (ALGOS, default
# "summa rdma-c"): every product on the device both ways (--gpu-min-flops 0), the median of --repeat
# products ("seconds" of the stats record: the slowest rank's time of the median run), and the
# ratio host / resident (above 1: resident faster). With mpirun, also at RANKS ranks (default
# "1 4"; one rank has one stage, so it times the device's sort-merge of a single product).
# OPS (default "spgemm spmm"): spmm times the distributed SpMM (k = K, default 64) with each
# stage's C tile staged through the bus (host) against C's tile resident on the device.
# Usage: bash bench/gpu/resident.sh DSMM_BINARY OUT_DIR MATRIX...   (RANKS, REPEAT, ALGOS, OPS,
# K from the env)
set -uo pipefail
dsmm=$1
out=$2
shift 2
mkdir -p "$out"
reps=${REPEAT:-5}
ranks=${RANKS:-1 4}
algos=${ALGOS:-summa rdma-c}
ops=${OPS:-spgemm spmm}
. "$(dirname "$0")/../../scripts/mpi.sh"
mpi=()
if mpi_found && "$dsmm" --version | grep -q "MPI: yes"; then
  mpi_launcher # Open MPI's flags only under Open MPI
else
  ranks=1
fi
secs() { grep -oE '"seconds": ?[0-9.eE+-]+' "$1" | head -1 | sed -E 's/.*: ?//'; }
printf "%-28s %-6s %-8s %5s %12s %12s %8s\n" matrix op algo ranks host_s resident_s ratio
for a in "$@"; do
  [ -f "$a" ] || { echo "missing $a: skipped"; continue; }
  b=$(basename "$a" | sed 's/\.mtx\(\.gz\)\?$//')
  for op in $ops; do
  opt=()
  [ "$op" = spmm ] && opt=(--k "${K:-64}")
  for alg in $algos; do
  for n in $ranks; do
    launch=()
    [ "$n" -gt 1 ] && launch=("${mpi[@]}" -n "$n")
    ok=1
    f=$out/$b.$op.$alg.$n
    for mode in host resident; do
      extra=()
      [ $mode = resident ] && extra=(--gpu-resident)
      "${launch[@]}" "$dsmm" "$op" "$a" "${opt[@]}" --algo "$alg" --gpu-min-flops 0 "${extra[@]}" --repeat "$reps" \
        --stats "$f.$mode.json" --quiet >"$f.$mode.log" 2>&1 || ok=0
    done
    if [ $ok = 1 ]; then
      h=$(secs "$f.host.json")
      r=$(secs "$f.resident.json")
      printf "%-28s %-6s %-8s %5s %12s %12s %8s\n" "$b" "$op" "$alg" "$n" "$h" "$r" "$(awk -v h="$h" -v r="$r" 'BEGIN { if (r > 0) printf "%.3f", h / r; else print "-" }')"
    else
      printf "%-28s %-6s %-8s %5s failed: %s\n" "$b" "$op" "$alg" "$n" "$(tail -c 200 "$f.host.log" "$f.resident.log" | tr '\n' ' ')"
    fi
  done
  done
  done
done

