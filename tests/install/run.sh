#!/usr/bin/env bash
# Installs the weft built in $1 into a scratch prefix and builds the consumer
# in this folder against it twice: through find_package(weft CONFIG) and
# through pkg-config. Each consumer is then run.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" && pwd)
work="$build/install-test"
rm -rf "$work"
mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" >/dev/null

cmake -S "$here" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/cmake" >/dev/null
"$work/cmake/consumer"

libdir=$(ls -d "$work/prefix"/lib*/pkgconfig | head -n 1)
export PKG_CONFIG_PATH="$libdir"
# shellcheck disable=SC2046
c++ -std=c++20 "$here/consumer.cpp" -o "$work/consumer-pc" $(pkg-config --cflags --libs weft)
"$work/consumer-pc"
echo "install-test: find_package and pkg-config consumers built and ran"
