#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine lacks, then configures and builds
# lanecast into ./build. Sourced or run by tools/demo.sh and tools/test.sh.
# Safe to run again: installs only missing packages, reconfigures only once.
#
#   tools/setup.sh [--fuzz]   --fuzz: also clang 14 and its libFuzzer (tests/fuzz)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

packages=(
  build-essential pkg-config meson ninja-build
  libdpdk-dev dpdk-dev          # DPDK 22.11: libraries, PMDs, dpdk-testpmd
  libhwloc-dev                  # placement of polling cores
  libboost-dev libgtest-dev     # Boost.Lockfree; GoogleTest
  libtomlplusplus-dev           # toml++: group files (config/groups/)
  libpmix-dev openmpi-bin       # the PMIx bootstrap; mpirun for its test (tests/net/pmix_test.sh)
  libopenmpi-dev libmpich-dev mpich  # liblanecast-mpi for each MPI (apps/mpi/); mpicc and mpirun/hydra for tests/mpi
  libpcap-dev                   # lanecast replay and record (pcap, pcapng)
  libsodium-dev                 # groups with a key: frame seals (AES-256-GCM), key derivation
  nlohmann-json3-dev            # every --json the commands print
  iproute2 python3 tcpdump      # tests
  python3-matplotlib            # the plots of tools/demo.sh, tools/plot.py, plot_plan.py (tests/apps/plot_test.sh)
  libibverbs-dev librdmacm-dev ibverbs-utils  # the verbs port (InfiniBand, RoCE); ibv_devices
  passwd util-linux             # tests/security: groupadd and gpasswd, setpriv (clients as other users)
  libcap2-bin                   # tests/security: capsh reads a daemon's capabilities (its systemd unit's)
  help2man man-db bash-completion  # man pages made from --help; tests/install/man_and_completion.sh reads them and completes
)
# The sanitizer build (tools/test.sh --sanitize) needs nothing more: GCC's
# ASan and UBSan runtimes come with build-essential. The fuzzers need clang,
# about 300 MB with LLVM, so only on request; libclang-rt-14-dev (libFuzzer)
# is only recommended by clang, so it is named.
if [[ ${1:-} == --fuzz ]]; then
  packages+=(clang-14 libclang-rt-14-dev)
elif (($#)); then
  echo "usage: tools/setup.sh [--fuzz]" >&2
  exit 2
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "lanecast setup: missing packages: ${missing[*]}" >&2
    echo "lanecast setup: install them as root: apt-get install ${missing[*]}" >&2
    exit 1
  fi
  echo "lanecast setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [[ ! -f build/build.ninja ]]; then
  meson setup build --buildtype=release >/dev/null
fi
ninja -C build
