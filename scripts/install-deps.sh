#!/usr/bin/env bash
# scripts/install-deps.sh: installs what dsmm needs to build and test on Debian/Ubuntu
# (compiler, cmake, make, Open MPI, zlib, OpenBLAS), with sudo when not root; a no-op when present.
# Extra package groups: `fuzz` (clang + libFuzzer runtime), `bench` (python3-scipy and the
# SpGEMM anchors of bench/spgemm.sh: SuiteSparse:GraphBLAS, PETSc).
set -euo pipefail
pkgs=(gcc libc6-dev make cmake pkg-config zlib1g-dev libopenblas-dev libopenmpi-dev openmpi-bin python3 mcl)
for extra in "$@"; do
  case "$extra" in
    fuzz) pkgs+=(clang libclang-rt-14-dev) ;;
    bench) pkgs+=(python3-scipy libgraphblas-dev libpetsc-real-dev) ;;
    valgrind) pkgs+=(valgrind) ;;
    *) echo "install-deps: unknown group '$extra'" >&2; exit 2 ;;
  esac
done
missing=()
for p in "${pkgs[@]}"; do
  # Multi-arch names resolve through dpkg-query; a package counts when its status is installed.
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-deps: missing packages (${missing[*]}) and no apt-get; install them by hand" >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1
  fi
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
