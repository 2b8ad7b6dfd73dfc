#!/usr/bin/env bash
# One lanecast member process per node on the testbed of tools/testbed.sh:
# N network namespaces, each with one veth (v0) to a Linux bridge in a switch
# namespace, tbf on both directions of every link (rate R, burst max(400 us of
# R, two frames), queue 5 ms), MTU M, IPv6 off. Its probe pair (p0, p1), shaped
# alike, measures the line rate in the same run (link_probe). Then every node runs
#   lanecast bench --config GROUP --rank I --yield-when-idle
# (discovery bootstrap, lanes paced to R; tests/bench/member_group.sh),
# osu_bcast-style timing; rank 0's
# table is printed with x_line = MB/s over the measured line rate, and the tc
# counters (drops) summed over all links. Everything is removed on any exit.
#
# usage: tests/bench/process_testbed.sh [--nodes N] [--lanes 1|2] [--rate MBIT] [--mtu M]
#          [--algos LIST] [--sizes LIST] [--iters K] [--warmup W]
#          [--lanecast PATH] [-- extra bench args]
# Needs root and iproute2; link_probe from lanecast's build (tests/bench).
set -euo pipefail

nodes=8 rate=200 mtu=1500 algos=chain sizes=64K,1M,8M iters=5 warmup=1 lanes=1
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
lanecast=$repo/build/apps/lanecast
extra=()
while (($#)); do
  case $1 in
    --nodes) nodes=$2; shift ;;
    --rate) rate=$2; shift ;;
    --lanes) lanes=$2; shift ;;
    --mtu) mtu=$2; shift ;;
    --algos) algos=$2; shift ;;
    --sizes) sizes=$2; shift ;;
    --iters) iters=$2; shift ;;
    --warmup) warmup=$2; shift ;;
    --lanecast) lanecast=$2; shift ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "process_testbed: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
probe=$(dirname "$lanecast")/../tests/bench/link_probe
# shellcheck source=tests/bench/member_group.sh
source "$repo/tests/bench/member_group.sh"
[[ $(id -u) -eq 0 ]] || { echo "process_testbed: needs root" >&2; exit 2; }
[[ -x $lanecast && -x $probe ]] || { echo "process_testbed: build lanecast and tests/bench/link_probe first" >&2; exit 2; }

tag=lcpt$(($$ % 100000))
work=$(mktemp -d)
cleanup() {
  pkill -9 -f -- "--config $work/group.toml" 2>/dev/null || true
  "$repo/tools/testbed.sh" down --name "$tag"
  rm -rf "$work"
}
trap cleanup EXIT INT TERM
"$repo/tools/testbed.sh" up "$nodes" --lanes "$lanes" --rate "$rate" --mtu "$mtu" --name "$tag" >/dev/null
sw=${tag}s
burst=$((rate * 50)); two=$((2 * (mtu + 14))); ((burst > two)) || burst=$two

line=$(line_rate "$probe" "$tag" "$mtu")
echo "# process testbed: $nodes member processes, $lanes lane(s) (a switch each), tbf $rate Mbit/s burst $burst B latency 5 ms both ways, MTU $mtu"
echo "# line rate (link_probe p0->p1, $((mtu + 14))-byte frames): $line MB/s payload"
write_member_group "$work/group.toml" process-testbed 33 "$nodes" "$lanes" "$rate" "$mtu" "$(largest_size "$sizes")"

tc_drops() {
  { for ((i = 0; i < nodes; i++)); do tc -s -n "${tag}n$i" qdisc show dev v0; done
    tc -s -n "$sw" qdisc show; } | awk '/dropped/ { for (k = 1; k <= NF; k++) if ($k == "dropped") d += $(k + 1) } END { print d + 0 }'
}
drops0=$(tc_drops)
status=0
run_members "$lanecast" "$tag" "$nodes" "$work/group.toml" "$work" \
  --algo "$algos" --sizes "$sizes" --iters "$iters" --warmup "$warmup" "${extra[@]}" || status=1
drops=$(($(tc_drops) - drops0))
awk -v line="$line" '
  /^#/ { print; next }
  /^algo/ { printf "%s %7s\n", $0, "x_line"; next }
  NF >= 8 { printf "%s %7.3f\n", $0, ($6 + 0) / line; next }
  { print }' "$work/rank0.out"
echo "# tc drops over every link during the run: $drops"
# Each member's counters, when asked for (-- --counters).
for ((i = 0; i < nodes; i++)); do grep -A2 "^rank $i:" "$work/rank$i.out" || true; done
exit $status
