#!/usr/bin/env bash
# Small-message latency: lanecast's 2-byte broadcast to N member processes
# beside the kernel's UDP multicast to one receiver, on the same testbed in
# the same run - what a user gets without lanecast (unreliable, one receiver).
#
# The testbed of tools/testbed.sh (N namespaces, a veth each to one Linux
# bridge, tbf both ways). First sockperf (Debian's sockperf) ping-pong over a
# UDP multicast group between node 0 and node 1: its one-way latency is half
# the round trip it measures. Then one lanecast member per node (bench
# --config, 2-byte messages) for each algorithm: the span (the root's posting
# to the last member holding it), ranks 1's and p-1's times, the spread
# (slowest - fastest) / median, and the span over sockperf's one-way average.
#
# usage: tests/bench/mcast_latency.sh [--nodes N] [--rate MBIT] [--mtu M]
#          [--algos LIST] [--iters K] [--seconds S] [--progress calls|cores]
#          [--lanecast PATH]
# --progress: how the members progress (bench --progress; default calls: one
# thread per process, as sockperf's).
# Needs root, iproute2 and sockperf (apt-get install sockperf).
set -euo pipefail

nodes=8 rate=200 mtu=1500 algos=linear,binomial,chain,mcast_chain iters=300 seconds=5 progress=calls
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
lanecast=$repo/build/apps/lanecast
while (($#)); do
  case $1 in
    --nodes) nodes=$2; shift ;;
    --rate) rate=$2; shift ;;
    --mtu) mtu=$2; shift ;;
    --algos) algos=$2; shift ;;
    --iters) iters=$2; shift ;;
    --seconds) seconds=$2; shift ;;
    --progress) progress=$2; shift ;;
    --lanecast) lanecast=$2; shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "mcast_latency: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
command -v sockperf >/dev/null || { echo "mcast_latency: needs sockperf (apt-get install sockperf)" >&2; exit 2; }
probe=$(dirname "$lanecast")/../tests/bench/link_probe
[[ -x $lanecast && -x $probe ]] || { echo "mcast_latency: build lanecast and tests/bench/link_probe first" >&2; exit 2; }
((nodes >= 2)) || { echo "mcast_latency: --nodes must be at least 2" >&2; exit 2; }
source "$repo/tests/bench/member_group.sh"

tag=lcml$(($$ % 100000))
start_testbed "$repo" "$probe" "$tag" "$nodes" "$rate" "$mtu"
echo "# $nodes namespaces on one bridge, tbf $rate Mbit/s both ways, MTU $mtu, $(nproc) CPUs shared by every process"

# The kernel: sockperf's server on node 1 joins the group on v0; the client on
# node 0 sends to it through v0 and waits for each reply.
group=239.78.0.1 port=11111
ip netns exec "${tag}n1" sockperf server -i "$group" -p "$port" --mc-rx-if 10.78.0.2 --mc-tx-if 10.78.0.2 \
  >"$work/sockperf_server.out" 2>&1 &
server=$!
sleep 0.5
ip netns exec "${tag}n0" timeout $((seconds + 30)) sockperf ping-pong -i "$group" -p "$port" -m 14 -t "$seconds" \
  --mc-tx-if 10.78.0.1 --mc-rx-if 10.78.0.1 >"$work/sockperf.out" 2>&1 || true
kill "$server" 2>/dev/null || true
wait "$server" 2>/dev/null || true
# "sockperf: ====> avg-latency=27.123 (std-dev=...)" and "---> percentile 99.000 =   40.1".
sp_avg=$(sed -n 's/.*avg-latency=\([0-9.]*\).*/\1/p' "$work/sockperf.out" | head -1)
sp_p50=$(awk '/percentile 50.000/ { print $NF }' "$work/sockperf.out" | head -1)
sp_p99=$(awk '/percentile 99.000/ { print $NF }' "$work/sockperf.out" | head -1)
if [[ -z $sp_avg ]]; then
  echo "# sockperf did not report a latency:"
  sed 's/^/#   /' "$work/sockperf.out" | tail -5
  exit 1
fi

# lanecast: one member per node, 2-byte broadcasts from rank 0.
write_member_group "$work/group.toml" mcast-latency 38 "$nodes" 1 "$rate" "$mtu" 64
run_members "$lanecast" "$tag" "$nodes" "$work/group.toml" "$work" --algo "$algos" --sizes 2 \
  --iters "$iters" --warmup "$iters" --progress "$progress" || exit 1

echo
echo "# kernel UDP multicast, sockperf ping-pong node 0 <-> node 1 (14-byte datagrams, ${seconds} s): one-way latency"
printf '%-26s %10s %10s %10s\n' "" avg_us p50_us p99_us
printf '%-26s %10s %10s %10s\n' "sockperf, 1 receiver" "$sp_avg" "${sp_p50:--}" "${sp_p99:--}"
echo
echo "# lanecast, 2 B to $nodes members, progress in $progress (rank 0's bench --config rows; span = root's posting to the last member holding)"
printf '%-12s %10s %10s %10s %8s %12s\n' algo span_us rank1_us rankN_us spread span/sockperf
awk -v sp="$sp_avg" '/^#/ || /^algo/ { next }
  NF >= 12 { printf "%-12s %10s %10s %10s %8s %12.2f\n", $1, $9, $10, $11, $12, (sp > 0 ? $9 / sp : 0) }' \
  "$work/rank0.out"
