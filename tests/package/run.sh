#!/usr/bin/env bash
# The Debian packages of the weft built in $1, as a user gets them: builds
# them (cpack, cmake/Package.cmake), installs them with apt-get, builds
# tests/install's consumer against the installed package through
# find_package and through pkg-config, runs the installed `weft topo`,
# removes the packages and checks that none of their files is left.
# Installing needs root: elsewhere, or where a weft package is already
# installed (the test would replace it), it exits 77, which ctest reports as
# skipped, after saying why.
set -euo pipefail
skip() { echo "package-test: skipped: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "installing packages needs root"
command -v apt-get >/dev/null || skip "no apt-get on this machine"
for p in libweft-dev weft; do
  if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    skip "$p is already installed here"
  fi
done

here=$(cd "$(dirname "$0")/../install" && pwd)
build=$(cd "$1" && pwd)
work="$build/package-test"
rm -rf "$work"
mkdir -p "$work"
cpack --config "$build/CPackConfig.cmake" -B "$work/debs" >"$work/cpack.log" 2>&1 ||
  { cat "$work/cpack.log"; exit 1; }
debs=("$work"/debs/*.deb)
[ ${#debs[@]} -eq 2 ] || { echo "package-test: expected 2 packages, cpack made: ${debs[*]}"; exit 1; }

remove() { apt-get remove --purge -y -qq libweft-dev weft >/dev/null 2>&1 || true; }
trap remove EXIT
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -qq --no-install-recommends "${debs[@]}" >"$work/apt.log" 2>&1 ||
  { cat "$work/apt.log"; exit 1; }
# What the packages put on the machine (regular files), to check their removal.
mapfile -t files < <(dpkg -L libweft-dev weft | while read -r f; do [ -f "$f" ] && echo "$f"; done)
[ ${#files[@]} -gt 0 ] || { echo "package-test: the packages installed no file"; exit 1; }

[ "$(command -v weft)" = /usr/bin/weft ] || { echo "package-test: weft is not /usr/bin/weft"; exit 1; }
weft topo >"$work/topo.txt" || { echo "package-test: the installed weft topo failed"; exit 1; }
grep -q "CPU" "$work/topo.txt" || { echo "package-test: weft topo printed no CPU"; cat "$work/topo.txt"; exit 1; }

# The consumer against the installed package: no prefix given, as a user has.
cmake -S "$here" -B "$work/cmake" >/dev/null
cmake --build "$work/cmake" >/dev/null
"$work/cmake/consumer"
# shellcheck disable=SC2046
c++ -std=c++20 "$here/consumer.cpp" -o "$work/consumer-pc" $(pkg-config --cflags --libs weft)
"$work/consumer-pc"

apt-get remove --purge -y -qq libweft-dev weft >"$work/apt-remove.log" 2>&1 ||
  { cat "$work/apt-remove.log"; exit 1; }
trap - EXIT
left=0
for f in "${files[@]}"; do
  if [ -e "$f" ]; then echo "package-test: left behind after removal: $f"; left=1; fi
done
[ $left -eq 0 ] || exit 1
echo "package-test: ${#debs[@]} packages built, installed (${#files[@]} files), used by the consumer, removed"
