#!/usr/bin/env bash
# Packets per second of one polling core forwarding segments between ring
# ports: lanecast's member (full protocol: header checks, reliable channel,
# payload copied into the member's buffer while its CRC is checked, the chain
# machine, zero-copy forward) next to dpdk-testpmd forwarding on ring ports in
# macswap mode, which touches every frame (io mode only passes pointers), run
# in this same script, with the ratio.
#
# usage: tests/bench/forward_vs_testpmd.sh [SECONDS]   (after tools/setup.sh)
#
# cycles/frame are TSC cycles of lanecast's forwarding member per forwarded
# frame (forward_bench); verified the broadcasts whose every byte at both
# receivers was compared with the root's and equal (a failure stops the
# run); own_buffers is the most payload buffers that member's own pool lent
# while forwarding (0: zero copy), copied_bytes the payload it copied to
# forward. keyed_Mpps and keyed_cycles: the same member in a group with a key
# (each frame's seal opened, the payload's checked, each forward sealed).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
secs=${1:-3}
bench=build/tests/bench/forward_bench
[[ -x $bench ]] || { echo "build first: tools/setup.sh" >&2; exit 2; }
command -v dpdk-testpmd >/dev/null || { echo "dpdk-testpmd missing (apt-get install dpdk-dev)" >&2; exit 2; }

# testpmd: two ring vdevs, macswap forwarding on one core, a burst sent first
# so packets circulate; the last stats periods' Rx-pps of both ports is the rate.
testpmd_mpps() {
  local frame=$1 out
  out=$( (sleep "$secs"; echo) | timeout $((secs + 30)) dpdk-testpmd --no-huge -m 1024 --no-pci \
      --no-shconf --no-telemetry -l 0,1 --vdev=net_ring0 --vdev=net_ring1 --log-level='*:error' -- \
      --forward-mode=macswap --tx-first --auto-start --stats-period 1 --total-num-mbufs=16384 \
      --txpkts="$frame" 2>&1) || true
  awk '/Rx-pps:/ { pps[++n] = $2 } END { if (n >= 2) printf "%.3f", (pps[n] + pps[n-1]) / 1e6; else print "nan" }' <<<"$out"
}

printf "%-8s %-8s %14s %13s %9s %13s %12s %12s %8s %11s %13s\n" segment frame_B lanecast_Mpps cycles/frame verified \
  copied_bytes own_buffers testpmd_Mpps ratio keyed_Mpps keyed_cycles
for seg in 64 1400; do
  frame=$((14 + 64 + seg))
  # A run that fails (a broadcast failed, bytes differ) stops the script.
  plain=$("$bench" "$seg" "$secs")
  sealed=$("$bench" "$seg" "$secs" 4 keyed)
  read -r ours cycles copied own verified < <(awk 'NR == 2 { print $4, $5, $6, $7, $8 }' <<<"$plain")
  read -r keyed keyed_cycles < <(awk 'NR == 2 { print $4, $5 }' <<<"$sealed")
  theirs=$(testpmd_mpps "$frame")
  ratio=$(awk -v a="$ours" -v b="$theirs" 'BEGIN { if (b > 0) printf "%.4f", a / b; else print "nan" }')
  printf "%-8s %-8s %14s %13s %9s %13s %12s %12s %8s %11s %13s\n" "$seg" "$frame" "$ours" "$cycles" "$verified" \
    "$copied" "$own" "$theirs" "$ratio" "$keyed" "$keyed_cycles"
done
