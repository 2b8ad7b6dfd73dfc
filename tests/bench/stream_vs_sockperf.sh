#!/usr/bin/env bash
# A stream of small messages on the namespaces testbed, lanecast against
# the kernel's UDP multicast, on the same bridge in the same run:
#
#   sockperf   throughput: node 0 sends 64-byte datagrams to a multicast
#              group as fast as it can for --seconds; each other node runs a
#              sockperf server joined to the group; received = the UDP
#              datagrams each receiver's kernel delivered (its namespace's
#              /proc/net/snmp), the slowest receiver's rate is the group's.
#              Latency: sockperf ping-pong to one receiver (one way = RTT/2).
#   lanecast   bench --stream from rank 0 to every member, one process per
#              namespace: flat out (msgs/s, every message to every member,
#              reliable and checked), then at half and a tenth of that rate
#              (latency).
#
# usage: tests/bench/stream_vs_sockperf.sh [--nodes 8] [--rate MBIT] [--size 64]
#        [--messages N] [--seconds S] [--progress calls|cores] [--lanecast FILE]
# Needs root, sockperf (apt-get install sockperf) and a build (tools/setup.sh).
set -euo pipefail

nodes=8 rate=10000 mtu=1500 size=64 messages=300000 seconds=5 progress=calls
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
lanecast=$repo/build/apps/lanecast
while (($#)); do
  case $1 in
    --nodes) nodes=$2; shift ;;
    --rate) rate=$2; shift ;;
    --size) size=$2; shift ;;
    --messages) messages=$2; shift ;;
    --seconds) seconds=$2; shift ;;
    --progress) progress=$2; shift ;;
    --lanecast) lanecast=$2; shift ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) echo "stream_vs_sockperf: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
command -v sockperf >/dev/null || { echo "stream_vs_sockperf: needs sockperf (apt-get install sockperf)" >&2; exit 2; }
probe=$(dirname "$lanecast")/../tests/bench/link_probe
[[ -x $lanecast && -x $probe ]] || { echo "stream_vs_sockperf: build lanecast and tests/bench/link_probe first" >&2; exit 2; }
((nodes >= 2)) || { echo "stream_vs_sockperf: --nodes must be at least 2" >&2; exit 2; }
source "$repo/tests/bench/member_group.sh"

tag=lcsv$(($$ % 100000))
start_testbed "$repo" "$probe" "$tag" "$nodes" "$rate" "$mtu"
echo "# $nodes namespaces on one bridge, tbf $rate Mbit/s both ways, MTU $mtu, $(nproc) CPUs shared by every process"

udp_in() {  # NODE -> UDP datagrams its kernel delivered, and those dropped for a full socket buffer
  ip netns exec "${tag}n$1" awk '/^Udp:/ { if (++k == 2) print $2, $6 }' /proc/net/snmp
}

group=239.78.0.2 port=11112
servers=()
for ((i = 1; i < nodes; i++)); do
  ip netns exec "${tag}n$i" sockperf server -i "$group" -p "$port" --mc-rx-if "10.78.0.$((i + 1))" \
    --mc-tx-if "10.78.0.$((i + 1))" \
    >"$work/sr$i.out" 2>&1 &
  servers+=($!)
done
sleep 1
declare -a before_in before_drop
for ((i = 1; i < nodes; i++)); do read -r before_in[i] before_drop[i] < <(udp_in "$i"); done
ip netns exec "${tag}n0" timeout $((seconds + 30)) sockperf throughput -i "$group" -p "$port" -m "$size" \
  -t "$seconds" --mc-tx-if 10.78.0.1 >"$work/tp.out" 2>&1 || true
sleep 0.5
slowest=-1 dropped=0
for ((i = 1; i < nodes; i++)); do
  read -r in drop < <(udp_in "$i")
  got=$((in - before_in[i]))
  dropped=$((dropped + drop - before_drop[i]))
  ((slowest < 0 || got < slowest)) && slowest=$got
done
kill "${servers[@]}" 2>/dev/null || true
wait "${servers[@]}" 2>/dev/null || true
sent_rate=$(sed -n 's/.*Message Rate is \([0-9]*\) \[msg\/sec\].*/\1/p' "$work/tp.out" | head -1)
[[ -n $sent_rate ]] || { echo "# sockperf throughput said:"; sed 's/^/#   /' "$work/tp.out"; exit 1; }
sp_rate=$(awk -v n="$slowest" -v s="$seconds" 'BEGIN { printf "%.0f", n / s }')

# Latency: ping-pong with one receiver.
ip netns exec "${tag}n1" sockperf server -i "$group" -p "$((port + 1))" --mc-rx-if 10.78.0.2 --mc-tx-if 10.78.0.2 \
  >"$work/pp_server.out" 2>&1 &
pp_server=$!
sleep 0.5
ip netns exec "${tag}n0" timeout $((seconds + 30)) sockperf ping-pong -i "$group" -p "$((port + 1))" -m "$size" \
  -t "$seconds" --mc-tx-if 10.78.0.1 --mc-rx-if 10.78.0.1 >"$work/pp.out" 2>&1 || true
kill "$pp_server" 2>/dev/null || true
wait "$pp_server" 2>/dev/null || true
sp_p50=$(awk '/percentile 50.000/ { print $NF }' "$work/pp.out" | head -1)
sp_p99=$(awk '/percentile 99.000/ { print $NF }' "$work/pp.out" | head -1)
sp_max=$(awk '/<MAX> observation/ { print $NF }' "$work/pp.out" | head -1)

write_member_group "$work/group.toml" stream-vs-sockperf 39 "$nodes" 1 "$rate" "$mtu" "$size"
run_members "$lanecast" "$tag" "$nodes" "$work/group.toml" "$work" --stream --sizes "$size" \
  --messages "$messages" --warmup 20000 --progress "$progress" || exit 1
cp "$work/rank0.out" "$work/flat.out"
flat=$(awk '$1 ~ /^[0-9]/ && $NF == "yes" { print $4; exit }' "$work/flat.out")
[[ -n $flat ]] || { echo "# lanecast flat out said:"; sed 's/^/#   /' "$work/flat.out"; exit 1; }
half=$(awk -v r="$flat" 'BEGIN { printf "%.0f", r / 2 }')
run_members "$lanecast" "$tag" "$nodes" "$work/group.toml" "$work" --stream --sizes "$size" \
  --messages "$messages" --warmup 20000 --msg-rate "$half" --progress "$progress" || exit 1
cp "$work/rank0.out" "$work/half.out"
tenth=$(awk -v r="$flat" 'BEGIN { printf "%.0f", r / 10 }')
run_members "$lanecast" "$tag" "$nodes" "$work/group.toml" "$work" --stream --sizes "$size" \
  --messages $((messages / 5)) --warmup 5000 --msg-rate "$tenth" --progress "$progress" || exit 1
cp "$work/rank0.out" "$work/tenth.out"

echo
echo "# sockperf: UDP multicast, $size-byte datagrams, node 0 -> $((nodes - 1)) receivers, ${seconds} s (unreliable, kernel)"
printf '%-44s %12s %9s %9s %9s\n' "" msgs_per_s p50_us p99_us max_us
printf '%-44s %12s %9s %9s %9s\n' "sockperf throughput: sent" "$sent_rate" - - -
printf '%-44s %12s %9s %9s %9s\n' "sockperf throughput: slowest receiver got" "$sp_rate" - - -
echo "#   datagrams the receivers' kernels dropped (socket buffer full): $dropped"
printf '%-44s %12s %9s %9s %9s\n' "sockperf ping-pong, 1 receiver (one way)" - "${sp_p50:--}" "${sp_p99:--}" "${sp_max:--}"
echo
echo "# lanecast bench --stream, $size-byte messages, rank 0 -> all $nodes members, reliable, every message checked (progress in $progress)"
printf '%-44s %12s %9s %9s %9s %10s\n' "" msgs_per_s p50_us p99_us max_us x_sockperf
awk -v sp="$sp_rate" -v what="lanecast flat out" '$1 ~ /^[0-9]/ && $NF == "yes" {
  printf "%-44s %12s %9s %9s %9s %10.2f\n", what, $4, $6, $7, $9, (sp > 0 ? $4 / sp : 0) }' "$work/flat.out"
awk -v sp="$sp_rate" -v what="lanecast at half that rate" '$1 ~ /^[0-9]/ && $NF == "yes" {
  printf "%-44s %12s %9s %9s %9s %10.2f\n", what, $4, $6, $7, $9, (sp > 0 ? $4 / sp : 0) }' "$work/half.out"
awk -v sp="$sp_rate" -v what="lanecast at a tenth of it" '$1 ~ /^[0-9]/ && $NF == "yes" {
  printf "%-44s %12s %9s %9s %9s %10.2f\n", what, $4, $6, $7, $9, (sp > 0 ? $4 / sp : 0) }' "$work/tenth.out"
