#!/usr/bin/env bash
# Small broadcasts as the group grows: mcast_chain (real multicast, then the
# reliable ring) beside binomial and linear, 2-byte messages, one member
# process per namespace of a shaped testbed (`lanecast bench --testbed P`),
# for each P of --nodes.
#
# Per P and algorithm: the span (the root's posting to the last member
# holding the message), ranks 1's and p-1's times, the spread (slowest -
# fastest) / median of the members' times, the critical path in hops, and the
# frames the root's uplink carried per broadcast as its tbf counted them: two
# runs of the same schedule, one with 0-byte and one with 2-byte messages
# (barriers, hellos and figure exchanges are the same in both), their
# difference divided by the broadcasts.
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
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The root's uplink packets (rank 0, lane v0) of a bench --testbed output.
root_up_pkts() { awk '$1 == "0" && $2 == "v0" { print $4; exit }' "$1"; }
hops() {  # ALGO P: hops on the critical path (each a frame's trip through the switch)
  case $1 in
    mcast_chain) echo 1 ;;       # the multicast (the ring only repairs)
    linear) echo 1 ;;            # but the root sends p-1 frames one after another
    binomial) awk -v p="$2" 'BEGIN { h = 0; for (n = 1; n < p; n *= 2) h++; print h }' ;;
    *) echo - ;;
  esac
}

echo "# lanecast bench --testbed P, 2-byte broadcasts, $iters timed after $iters warm-up, tbf $rate Mbit/s, $(nproc) CPUs shared by all P member processes"
printf '%-4s %-12s %10s %10s %10s %8s %6s %14s\n' P algo span_us rank1_us rankN_us spread hops root_frames/bc
for p in $nodes_list; do
  "$lanecast" bench --testbed "$p" --rate "$rate" --algo "$algos" --sizes 2 --iters "$iters" --warmup "$iters" \
    >"$work/time.$p" 2>&1 || { cat "$work/time.$p"; exit 1; }
  grep -q "^# multicast: by the switch" "$work/time.$p" || { grep "^# multicast" "$work/time.$p"; exit 1; }
  for algo in ${algos//,/ }; do
    for size in 0 2; do
      "$lanecast" bench --testbed "$p" --rate "$rate" --algo "$algo" --sizes "$size" --iters "$iters" --warmup 0 \
        >"$work/frames.$p.$algo.$size" 2>&1 || { cat "$work/frames.$p.$algo.$size"; exit 1; }
    done
    a=$(root_up_pkts "$work/frames.$p.$algo.0")
    b=$(root_up_pkts "$work/frames.$p.$algo.2")
    awk -v algo="$algo" -v p="$p" -v h="$(hops "$algo" "$p")" -v a="$a" -v b="$b" -v n="$iters" '
      $1 == algo && NF >= 12 && $2 == "2" {
        printf "%-4s %-12s %10s %10s %10s %8s %6s %14.2f\n", p, algo, $9, $10, $11, $12, h, (b - a) / n; exit }' \
      "$work/time.$p"
  done
done
