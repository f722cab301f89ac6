#!/usr/bin/env bash
# scripts/check-install.sh: installs dsmm into a temporary prefix and builds a consumer with
# find_package(dsmm) and with pkg-config, static and shared, then runs both. The library is
# built at -O0 (Debug): what is checked is the package, and that halves CI's time for it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for shared in OFF ON; do
  cmake -S "$root" -B "$tmp/build-$shared" -DCMAKE_BUILD_TYPE=Debug -DBUILD_SHARED_LIBS=$shared \
    -DDSMM_BUILD_TESTS=OFF -DDSMM_BUILD_BENCH=OFF -DCMAKE_INSTALL_PREFIX="$tmp/prefix-$shared" >/dev/null
  cmake --build "$tmp/build-$shared" -j "$(nproc)" >/dev/null
  cmake --install "$tmp/build-$shared" >/dev/null
  cmake -S "$root/tests/install" -B "$tmp/consumer-$shared" -DCMAKE_PREFIX_PATH="$tmp/prefix-$shared" >/dev/null
  cmake --build "$tmp/consumer-$shared" >/dev/null
  LD_LIBRARY_PATH="$tmp/prefix-$shared/lib" "$tmp/consumer-$shared/consumer"
  test -x "$tmp/prefix-$shared/bin/dsmm"
  "$tmp/prefix-$shared/bin/dsmm" --version >/dev/null
done
# pkg-config, shared build
pc="$tmp/prefix-ON/lib/pkgconfig"
[ -d "$pc" ] || pc=$(dirname "$(find "$tmp/prefix-ON" -name dsmm.pc | head -1)")
PKG_CONFIG_PATH="$pc" cc "$root/tests/install/consumer.c" -o "$tmp/consumer-pc" \
  $(PKG_CONFIG_PATH="$pc" pkg-config --cflags --libs dsmm)
LD_LIBRARY_PATH="$(dirname "$pc")" "$tmp/consumer-pc"
echo "check-install: cmake package (static, shared) and pkg-config consumers work"
