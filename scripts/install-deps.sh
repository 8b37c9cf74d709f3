#!/usr/bin/env bash
# Installs, with apt-get, the Debian 12 packages weft builds, tests and
# reports with; does nothing when they are all there. Needs root (or sudo).
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  clang libclang-rt-14-dev                # the second compiler of the test matrix
  libomp-dev                              # OpenMP for clang (g++ ships libgomp): a peer in the experiments
  libhwloc-dev hwloc                      # topology
  liburing-dev                            # io_uring for weft::AsyncFile
  libcli11-dev libfmt-dev nlohmann-json3-dev   # the CLI
  libgtest-dev libgmock-dev libbenchmark-dev   # tests and micro-benchmarks
  libtbb-dev libboost-dev                 # peers in the pool experiments
  nettle-dev                              # SHA-1 for the UTS trees of weft suite
  libmimalloc-dev libjemalloc-dev         # peers in the allocator experiment
  python3 python3-matplotlib              # plots for the report
  spin                                    # model checks of the protocols
  doxygen                                 # the API reference (make docs)
  openmpi-bin libopenmpi-dev              # the MPI test and example (weft under mpirun)
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "weft: installing missing packages: ${missing[*]}" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "weft: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
