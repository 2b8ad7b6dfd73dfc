#!/usr/bin/env bash
# The fully static lanecast (meson -Dstatic_binary=true) runs where nothing
# but the kernel is: it is one statically linked file, and inside an empty
# root holding only that file (and the kernel's /proc, /sys and /dev) it forms
# a group on the in-process fabric and verifies every byte, multicast
# included. Needs root for chroot and the mounts; everything is undone on exit.
#
# usage: static_binary_test.sh path/to/static/lanecast
set -u
bin=${1:?usage: static_binary_test.sh path/to/static/lanecast}
# A dynamic executable names its loader (a PT_INTERP program header).
if readelf -lW "$bin" | grep -q "INTERP"; then
  echo "FAIL: $bin is dynamically linked: $(readelf -lW "$bin" | grep -A1 INTERP | tail -1)"
  exit 1
fi
echo "# $bin: statically linked, no loader, $(du -h "$bin" | cut -f1)"
if [[ $(id -u) -ne 0 ]]; then
  echo "SKIP: needs root for chroot"
  exit 77
fi
root=$(mktemp -d)
cleanup() {
  for m in proc sys dev; do umount -l "$root/$m" 2>/dev/null; done
  rm -rf "$root"
}
trap cleanup EXIT INT TERM
mkdir -p "$root/proc" "$root/sys" "$root/dev" "$root/tmp"
cp "$bin" "$root/lanecast"
mount -t proc proc "$root/proc" && mount --rbind /sys "$root/sys" && mount --rbind /dev "$root/dev" ||
  { echo "SKIP: cannot mount /proc, /sys and /dev in a scratch root here"; exit 77; }
out=$(timeout 120 chroot "$root" /lanecast bench --nodes 4 --algo mcast_chain,chain --sizes 2,64K,1M --iters 3 2>&1)
rc=$?
echo "$out"
if [[ $rc -ne 0 ]]; then
  echo "FAIL: the static lanecast exited $rc in an empty root"
  exit 1
fi
if [[ $(grep -cE " yes +[0-9.]+ +[0-9.]+ +[0-9.]+$" <<<"$out") -ne 6 ]]; then
  echo "FAIL: not every broadcast verified"
  exit 1
fi
grep -q "^# multicast: by the switch" <<<"$out" || { echo "FAIL: no multicast"; exit 1; }
echo "static lanecast: ok in an empty root"
