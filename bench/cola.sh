#!/usr/bin/env bash
# bench/cola.sh: the 1D CoLa SpMM family (docs/cola.md) on the real graphs of ../shared/data.
#  1. Volume table (the CoLa paper's Tables 2/3): for every square matrix and network there,
#     at P = 4 (workgroups of 2) and P = 8 (workgroups of 4), k = 32 float, without and with
#     reordering: V_CG (broadcast every panel), V_FR (a row per remote nonzero), V_FC (each
#     needed row once) and the inter-workgroup bytes without and with fusion, summed over the
#     ranks, from `dsmm spmm --algo cola --stats` (exact counts of the plan).
#  2. Timing at P = 4, workgroups of 2, k = 32 double, in the same run: cola, cola-nofusion,
#     bcast-1d and rowwise-1d with reorder none and rabbit, and PETSc's MatMatMult (MPIAIJ x
#     MPIDENSE, 1D rows; bench/dist_petsc) on the same matrix: median of --repeat multiplies
#     (dsmm: the slowest rank per multiply; PETSc: dist_petsc's median), ratio to PETSc.
#  3. Transfers of cola-nofusion (§4.3): MPI_Alltoallv, MPI_Neighbor_alltoallv and MPI_Put at
#     P = 4, k = 32 double, median of --repeat, same graphs as the timing.
# Usage: bench/cola.sh BUILD_DIR [--repeat 5] [--k 32] [--quick]
#                               [--volume-only | --time-only | --transfers-only] [--only NAME...]
#   BUILD_DIR has bin/dsmm (and bench/bench_spgemm + bench/dist_petsc for PETSc: make bench).
#   --quick: the volume table only for graphs below 1M nonzeros, timing for three graphs.
# Prints the tables; skips cleanly (a line saying so) what is absent.
set -uo pipefail
build=${1:?usage: bench/cola.sh BUILD_DIR [--repeat R] [--k K] [--quick] [--only NAME...]}
shift
repeat=5
k=32
quick=0
volume=1
timing=1
main=1
only=()
while [ $# -gt 0 ]; do
  case "$1" in
    --repeat) repeat=$2; shift 2 ;;
    --k) k=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    --volume-only) timing=0; shift ;;
    --time-only) volume=0; shift ;;
    --transfers-only) volume=0; main=0; shift ;;
    --only) shift; while [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; do only+=("$1"); shift; done ;;
    *) echo "cola.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
here=$(cd "$(dirname "$0")" && pwd)
data=${DSMM_DATA:-$here/../../shared/data}
dsmm=$build/bin/dsmm
prep=$build/bench/bench_spgemm
petsc=$build/bench/dist_petsc
[ -x "$dsmm" ] || { echo "cola.sh: $dsmm not built" >&2; exit 1; }
[ -d "$data" ] || { echo "cola.sh: skipped: no data folder $data"; exit 0; }
. "$here/../scripts/mpi.sh"
mpi_found || { echo "cola.sh: skipped: ${MPIRUN:-mpirun} not found"; exit 0; }
mpi_launcher # the launch command, with Open MPI's flags only under Open MPI
export OMP_NUM_THREADS=1
py=python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Square matrices and networks (abc files are read as labelled networks).
graphs=()
for f in "$data"/graphs/*.gz "$data"/matrices/*.gz "$data"/mcl/hep-th.mtx.gz "$data"/mcl/*.txt.gz \
         "$data"/mcl/STRING_PPI.edgelist.gz "$data"/gnn/*.adj.mtx.gz "$data"/gnn/node2vec_PPI.edgelist.gz; do
  [ -f "$f" ] || continue
  case "$(basename "$f")" in
    *clusters*|*ground*|*complexes*|*node_list*) continue ;;
  esac
  name=$(basename "$f" .gz); name=${name%.mtx}; name=${name%.txt}; name=${name%.edgelist}
  if [ ${#only[@]} -gt 0 ]; then
    keep=0; for o in "${only[@]}"; do [ "$o" = "$name" ] && keep=1; done
    [ $keep -eq 1 ] || continue
  fi
  graphs+=("$name=$f")
done
fmt_of() { case "$1" in *.txt.gz) echo "--format abc" ;; *) echo "" ;; esac; }

if [ $volume -eq 1 ]; then
echo "== volume (k = $k, float; MB summed over ranks; in parentheses the share of V_CG / V_FR that is redundant)"
printf "%-28s %2s %2s %-7s %18s %18s %10s %13s %13s\n" graph P G reorder "V_CG" "V_FR" "V_FC" "inter nofus" "inter fused"
for g in "${graphs[@]}"; do
  name=${g%%=*}; f=${g#*=}
  nnz_ok=1
  if [ $quick -eq 1 ] && [ "$(stat -c %s "$f")" -gt 3000000 ]; then nnz_ok=0; fi
  [ $nnz_ok -eq 1 ] || { echo "$name: skipped (--quick)"; continue; }
  for pg in "4 2" "8 4"; do
    set -- $pg
    for ro in none rabbit; do
      s=$work/$name.$1.$ro.json
      # shellcheck disable=SC2046
      if ! "${mpi[@]}" -n "$1" "$dsmm" spmm "$f" $(fmt_of "$f") --algo cola --k "$k" --type float \
           --workgroup-size "$2" --reorder "$ro" -q --stats "$s" >"$work/out" 2>&1; then
        echo "$name P=$1 $ro: failed: $(grep -m1 dsmm "$work/out")"
        continue
      fi
      "$py" - "$s" "$name" "$1" "$2" "$ro" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
mb = lambda b: b / 1e6
cg, fr, fc = s["v_cg_bytes"], s["v_fr_bytes"], s["v_fc_bytes"]
red = lambda v: 100.0 * (v - fc) / v if v else 0.0
print("%-28s %2s %2s %-7s %10.3f (%4.1f%%) %10.3f (%4.1f%%) %10.3f %13.3f %13.3f" % (
    sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], mb(cg), red(cg), mb(fr), red(fr),
    mb(fc), mb(s["inter_nofusion_bytes"]), mb(s["inter_fused_bytes"])))
EOF
    done
  done
done

fi

[ $timing -eq 1 ] || exit 0
timed=("${graphs[@]}")
if [ $quick -eq 1 ]; then
  timed=(); for g in "${graphs[@]}"; do case "${g%%=*}" in cora.adj|ca-condmat-cc1|email-enron) timed+=("$g") ;; esac; done
fi
if [ $main -eq 1 ]; then
echo
echo "== time (P = 4, workgroups of 2, k = $k, double, median of $repeat; ms; PETSc runs the original order; ratio = PETSc / dsmm cola)"
have_petsc=0
if [ -x "$petsc" ] && [ -x "$prep" ]; then have_petsc=1; else echo "(PETSc: skipped: $petsc or $prep not built; make bench)"; fi
printf "%-28s %-7s %10s %10s %10s %10s %10s %8s\n" graph reorder cola nofusion bcast-1d rowwise-1d PETSc "PETSc/cola"
for g in "${timed[@]}"; do
  name=${g%%=*}; f=${g#*=}
  case "$f" in *.txt.gz) continue ;; esac # PETSc's reader takes matrices; abc networks: volume only
  pt=""
  if [ $have_petsc -eq 1 ]; then
    csr=$work/$name.csr
    if "$prep" "$f" --export "$csr" --no-run --name "$name" >/dev/null 2>"$work/err"; then
      if "${mpi[@]}" -n 4 "$petsc" "$csr" --ops spmm --k "$k" --repeat "$repeat" --warmup 1 >"$work/petsc" 2>"$work/err"; then
        pt=$("$py" -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])["seconds"])' "$work/petsc")
      fi
      rm -f "$csr"
    fi
  fi
  for ro in none rabbit; do
    row=()
    for a in cola cola-nofusion bcast-1d rowwise-1d; do
      s=$work/t.$name.$a.$ro.json
      if "${mpi[@]}" -n 4 "$dsmm" spmm "$f" --algo "$a" --k "$k" --type double --workgroup-size 2 \
           --reorder "$ro" --repeat "$repeat" -q --stats "$s" >"$work/out" 2>&1; then
        row+=("$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["seconds"])' "$s")")
      else
        row+=("nan")
      fi
    done
    "$py" - "$name" "$ro" "${pt:-nan}" "${row[@]}" <<'EOF'
import sys
name, ro, pt = sys.argv[1], sys.argv[2], float(sys.argv[3])
t = [float(x) for x in sys.argv[4:]]
ms = lambda x: "%10.3f" % (1e3 * x) if x == x else "%10s" % "-"
ratio = "%8.2f" % (pt / t[0]) if pt == pt and t[0] == t[0] and t[0] > 0 else "%8s" % "-"
print("%-28s %-7s %s %s %s %s %s %s" % (name, ro, ms(t[0]), ms(t[1]), ms(t[2]), ms(t[3]),
                                        ms(pt) if ro == "none" else "%10s" % "", ratio))
EOF
  done
done
fi

echo
echo "== transfers of cola-nofusion (P = 4, k = $k, double, median of $repeat; ms; comm = slowest rank's communication)"
printf "%-28s %-7s %18s %18s %18s\n" graph reorder "alltoallv (comm)" "neighbor (comm)" "put (comm)"
for g in "${timed[@]}"; do
  name=${g%%=*}; f=${g#*=}
  case "$f" in *.txt.gz) continue ;; esac
  for ro in none rabbit; do
    row=()
    for c in alltoallv neighbor put; do
      s=$work/x.$name.$c.$ro.json
      if "${mpi[@]}" -n 4 "$dsmm" spmm "$f" --algo cola-nofusion --comm "$c" --k "$k" \
           --type double --reorder "$ro" --repeat "$repeat" -q --stats "$s" >"$work/out" 2>&1; then
        row+=("$("$py" -c 'import json,sys; d=json.load(open(sys.argv[1])); print("%.3f (%.3f)" % (1e3*d["seconds"], 1e3*d["comm_seconds"]))' "$s")")
      else
        row+=("-")
      fi
    done
    printf "%-28s %-7s %18s %18s %18s\n" "$name" "$ro" "${row[@]}"
  done
done
