#!/usr/bin/env bash
# Small broadcasts as the group grows: mcast_chain (real multicast, then the
# reliable ring) beside binomial and linear, 2-byte messages, one member
# process per namespace of a shaped testbed (`lanecast bench --testbed P`),
# for each P of --nodes.
#
# Per P and algorithm: the span (the root's posting to the last member
# holding the message), ranks 1's and p-1's times, the spread (slowest -
# fastest) / median of the members' times and the critical path in hops.
#
# Then the frames on the wire: per P, one process whose members sit on the
# af_packet PMD over veths of one Linux bridge (`bench --ports`: no barriers,
# no bootstrap, nothing but the broadcasts), and the kernel's count of the
# frames the root's veth sent, per broadcast - at 2 B and at 64 KiB (per
# segment): mcast_chain's root sends one multicast and one ring frame per
# segment whatever P, linear's P-1, binomial's log2 P.
#
# usage: tests/bench/mcast_scaling.sh [--nodes "2 4 8 16"] [--iters K]
#          [--rate MBIT] [--algos LIST] [--lanecast PATH]
# Needs root and iproute2. Every process shares this host's CPUs: on a host
# with fewer CPUs than members, the times are mostly scheduling.
set -euo pipefail

nodes_list="2 4 8 16" iters=300 rate=200 algos=mcast_chain,binomial,linear
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
lanecast=$repo/build/apps/lanecast
while (($#)); do
  case $1 in
    --nodes) nodes_list=$2; shift ;;
    --iters) iters=$2; shift ;;
    --rate) rate=$2; shift ;;
    --algos) algos=$2; shift ;;
    --lanecast) lanecast=$2; shift ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "mcast_scaling: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
[[ -x $lanecast ]] || { echo "mcast_scaling: build lanecast first (tools/test.sh)" >&2; exit 2; }
lanecast=$(realpath "$lanecast")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

hops() {  # ALGO P: hops on the critical path (each a frame's trip through the switch)
  case $1 in
    mcast_chain) echo 1 ;;       # the multicast (the ring only repairs)
    linear) echo 1 ;;            # but the root sends p-1 frames one after another
    binomial) awk -v p="$2" 'BEGIN { h = 0; for (n = 1; n < p; n *= 2) h++; print h }' ;;
    *) echo - ;;
  esac
}

echo "# lanecast bench --testbed P, 2-byte broadcasts, $iters timed after $iters warm-up, tbf $rate Mbit/s, $(nproc) CPUs shared by all P member processes"
printf '%-4s %-12s %10s %10s %10s %8s %6s\n' P algo span_us rank1_us rankN_us spread hops
for p in $nodes_list; do
  "$lanecast" bench --testbed "$p" --rate "$rate" --algo "$algos" --sizes 2 --iters "$iters" --warmup "$iters" \
    >"$work/time.$p" 2>&1 || { cat "$work/time.$p"; exit 1; }
  grep -q "^# multicast: by the switch" "$work/time.$p" || { grep "^# multicast" "$work/time.$p"; exit 1; }
  for algo in ${algos//,/ }; do
    awk -v algo="$algo" -v p="$p" -v h="$(hops "$algo" "$p")" '
      $1 == algo && NF >= 12 && $2 == "2" { printf "%-4s %-12s %10s %10s %10s %8s %6s\n", p, algo, $9, $10, $11, $12, h; exit }' \
      "$work/time.$p"
  done
done

# Frames on the wire: one namespace, a bridge, a veth per member.
ns=lcms$$
trap 'ip netns del "$ns" 2>/dev/null; rm -rf "$work"' EXIT
ip netns add "$ns"
ip -n "$ns" link add br0 type bridge
ip -n "$ns" link set br0 up
ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
max_p=0
for p in $nodes_list; do ((p > max_p)) && max_p=$p; done
for ((i = 0; i < max_p; i++)); do
  ip -n "$ns" link add "v$i" type veth peer name "b$i"
  ip -n "$ns" link set "b$i" master br0 up
  ip -n "$ns" link set "v$i" up
done
tx_packets() { ip netns exec "$ns" cat /sys/class/net/v0/statistics/tx_packets; }
frames=200
echo
echo "# frames the root's veth sent per broadcast (kernel counter; one process, af_packet ports on one bridge, $frames broadcasts each)"
printf '%-4s %-12s %12s %16s\n' P algo "2 B: frames" "64K: per segment"
for p in $nodes_list; do
  ports=""
  for ((i = 0; i < p; i++)); do ports+="net_af_packet$i,iface=v$i;"; done
  for algo in ${algos//,/ }; do
    per=()
    for size in 2 64K; do
      before=$(tx_packets)
      ip netns exec "$ns" "$lanecast" bench --ports "$ports" --algo "$algo" --sizes "$size" --iters "$frames" \
        --warmup 0 >"$work/frames.$p.$algo.$size" 2>&1 || { cat "$work/frames.$p.$algo.$size"; exit 1; }
      grep -q "^# multicast: by the switch" "$work/frames.$p.$algo.$size" || { grep "^# multicast" "$work/frames.$p.$algo.$size"; exit 1; }
      per+=($(( $(tx_packets) - before )))
    done
    segments=$(awk '/^# lanecast bench:/ { for (i = 1; i <= NF; i++) if ($i == "segment") print int((65536 + $(i + 1) - 1) / $(i + 1)) }' \
      "$work/frames.$p.$algo.64K")
    awk -v p="$p" -v a="$algo" -v f2="${per[0]}" -v f64="${per[1]}" -v n="$frames" -v s="$segments" \
      'BEGIN { printf "%-4s %-12s %12.2f %16.2f\n", p, a, f2 / n, f64 / n / s }'
  done
done
