#!/usr/bin/env bash
# Packets per second of one polling core forwarding segments between DPDK
# ring ports: lanecast's node (full protocol) next to dpdk-testpmd's io
# forwarding on ring ports, run in this same script, with the ratio.
#
# usage: tests/bench/forward_vs_testpmd.sh [SECONDS]   (after tools/setup.sh)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
secs=${1:-3}
bench=build/tests/bench/forward_bench
[[ -x $bench ]] || { echo "build first: tools/setup.sh" >&2; exit 2; }
command -v dpdk-testpmd >/dev/null || { echo "dpdk-testpmd missing (apt-get install dpdk-dev)" >&2; exit 2; }

# testpmd: two ring vdevs, io forwarding on one core, a burst sent first so
# packets circulate; the last stats period's Rx-pps of both ports is the rate.
testpmd_mpps() {
  local frame=$1 out
  out=$( (sleep "$secs"; echo) | timeout $((secs + 30)) dpdk-testpmd --no-huge -m 1024 --no-pci \
      --no-shconf --no-telemetry -l 0,1 --vdev=net_ring0 --vdev=net_ring1 --log-level='*:error' -- \
      --forward-mode=io --tx-first --auto-start --stats-period 1 --total-num-mbufs=16384 \
      --txpkts="$frame" 2>&1) || true
  awk '/Rx-pps:/ { pps[++n] = $2 } END { if (n >= 2) printf "%.3f", (pps[n] + pps[n-1]) / 1e6; else print "nan" }' <<<"$out"
}

printf "%-8s %-10s %12s %14s %8s\n" segment frame_B lanecast_Mpps testpmd_io_Mpps ratio
for seg in 64 1400; do
  frame=$((14 + 64 + seg))
  ours=$("$bench" "$seg" "$secs" | awk 'NR == 2 { print $5 }')
  theirs=$(testpmd_mpps "$frame")
  ratio=$(awk -v a="$ours" -v b="$theirs" 'BEGIN { if (b > 0) printf "%.4f", a / b; else print "nan" }')
  printf "%-8s %-10s %12s %14s %8s\n" "$seg" "$frame" "$ours" "$theirs" "$ratio"
done
