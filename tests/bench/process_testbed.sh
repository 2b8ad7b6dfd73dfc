#!/usr/bin/env bash
# One lanecast member process per node of a shaped testbed, beside the links'
# line rate measured in the same run:
#   1. the line rate: raw frames of lanecast's size blasted through the probe
#      pair (p0 -> p1, link_probe) of a testbed shaped alike
#   2. lanecast bench --testbed N (it builds the testbed, runs every member,
#      shows the tc counters beside the payload, and removes it all), rank 0's
#      table with x_line = MB/s over the measured line rate appended
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
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "process_testbed: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
probe=$(dirname "$lanecast")/../tests/bench/link_probe
# shellcheck source=tests/bench/member_group.sh
source "$repo/tests/bench/member_group.sh"  # line_rate
[[ $(id -u) -eq 0 ]] || { echo "process_testbed: needs root" >&2; exit 2; }
[[ -x $lanecast && -x $probe ]] || { echo "process_testbed: build lanecast and tests/bench/link_probe first" >&2; exit 2; }

tag=lcpt$(($$ % 100000))
cleanup() { "$lanecast" testbed down --name "$tag" >/dev/null; }
trap cleanup EXIT INT TERM
"$lanecast" testbed up 2 --rate "$rate" --mtu "$mtu" --name "$tag" >/dev/null
line=$(line_rate "$probe" "$tag" "$mtu")
"$lanecast" testbed down --name "$tag" >/dev/null
echo "# line rate (link_probe p0->p1, $((mtu + 14))-byte frames): $line MB/s payload"

status=0
# x_line on rank 0's rows as they come (the table ends at the first empty line).
"$lanecast" bench --testbed "$nodes" --lanes "$lanes" --rate "$rate" --mtu "$mtu" \
  --algo "$algos" --sizes "$sizes" --iters "$iters" --warmup "$warmup" "${extra[@]}" |
  awk -v line="$line" '
    !table && /^algo/ { table = 1; printf "%s %7s\n", $0, "x_line"; fflush(); next }
    table && /^$/ { table = 0 }
    table && ($8 == "yes" || $8 == "NO") { printf "%s %7.3f\n", $0, ($6 + 0) / line; fflush(); next }
    { print; fflush() }' || status=$?
exit $status
