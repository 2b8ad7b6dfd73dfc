#!/usr/bin/env bash
# Does `lanecast plan` predict what member processes measure? On the testbed
# of tools/testbed.sh (N namespaces, one bridge, tbf RATE on every link), it
# measures the two inputs of plan's model - t0 (a 2-byte broadcast between two
# member processes) and the bandwidth (link_probe's payload rate) - then runs
# each algorithm in N member processes and prints, per size, bench's span_us
# (the root's posting to the last member holding the message, on the host's
# clock) beside plan's prediction with those inputs, and the error.
#
# usage: tests/bench/plan_vs_measured.sh [--nodes N] [--rate MBIT] [--mtu M]
#          [--algos LIST] [--sizes LIST] [--iters K] [--lanecast PATH]
# Needs root and iproute2; link_probe from lanecast's build (tests/bench).
set -euo pipefail

nodes=8 rate=200 mtu=1500 algos=linear,binomial,chain,bintree,multilane sizes=64K,1M,8M iters=5
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
lanecast=$repo/build/apps/lanecast
while (($#)); do
  case $1 in
    --nodes) nodes=$2; shift ;;
    --rate) rate=$2; shift ;;
    --mtu) mtu=$2; shift ;;
    --algos) algos=$2; shift ;;
    --sizes) sizes=$2; shift ;;
    --iters) iters=$2; shift ;;
    --lanecast) lanecast=$2; shift ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "plan_vs_measured: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
probe=$(dirname "$lanecast")/../tests/bench/link_probe
# shellcheck source=tests/bench/member_group.sh
source "$repo/tests/bench/member_group.sh"
[[ $(id -u) -eq 0 ]] || { echo "plan_vs_measured: needs root" >&2; exit 2; }
[[ -x $lanecast && -x $probe ]] || { echo "plan_vs_measured: build lanecast and tests/bench/link_probe first" >&2; exit 2; }

tag=lcpv$(($$ % 100000))
start_testbed "$repo" "$probe" "$tag" "$nodes" "$rate" "$mtu"
t0=$(hop_t0_us "$lanecast" "$tag" "$rate" "$mtu" "$work")
segment=$((mtu - 72))
echo "# plan vs measured: $nodes member processes, tbf $rate Mbit/s on every link, MTU $mtu, segment $segment B"
echo "# plan's inputs measured here: --t0 $t0 (2-byte broadcast, 2 processes) --bw $line (link_probe payload MB/s)"
write_member_group "$work/group.toml" plan-vs-measured 37 "$nodes" 1 "$rate" "$mtu" "$(largest_size "$sizes")"
run_members "$lanecast" "$tag" "$nodes" "$work/group.toml" "$work" --algo "$algos" --sizes "$sizes" \
  --iters "$iters" --warmup 1 || exit 1
bench_rows "$work/rank0.out" >"$work/measured"
printf '%-10s %6s %12s %12s %12s %8s\n' algo size span_us held_us plan_us error
while read -r a b span held; do
  p=$(plan_us "$lanecast" "$a" "$nodes" "$b" "$t0" "$line" "$segment")
  awk -v a="$a" -v b="$b" -v m="$span" -v h="$held" -v p="$p" 'BEGIN {
    printf "%-10s %6d %12.1f %12.1f %12.1f %+7.1f%%\n", a, b, m, h, p, (p - m) / m * 100 }'
done <"$work/measured"
