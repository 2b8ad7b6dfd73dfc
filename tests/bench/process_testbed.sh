#!/usr/bin/env bash
# One lanecast member process per node on the testbed of tools/testbed.sh:
# N network namespaces, each with one veth (v0) to a Linux bridge in a switch
# namespace, tbf on both directions of every link (rate R, burst max(400 us of
# R, two frames), queue 5 ms), MTU M, IPv6 off. Its probe pair (p0, p1), shaped
# alike, measures the line rate in the same run (link_probe). Then every node runs
#   lanecast bench --config GROUP --rank I --yield-when-idle
# (discovery bootstrap, lanes paced to R), osu_bcast-style timing; rank 0's
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
[[ $(id -u) -eq 0 ]] || { echo "process_testbed: needs root" >&2; exit 2; }
[[ -x $lanecast && -x $probe ]] || { echo "process_testbed: build lanecast and tests/bench/link_probe first" >&2; exit 2; }

tag=lcpt$(($$ % 100000))
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  pkill -9 -f -- "--config $work/group.toml" 2>/dev/null || true
  "$repo/tools/testbed.sh" down --name "$tag"
  rm -rf "$work"
}
trap cleanup EXIT INT TERM
"$repo/tools/testbed.sh" up "$nodes" --lanes "$lanes" --rate "$rate" --mtu "$mtu" --name "$tag" >/dev/null
sw=${tag}s
burst=$((rate * 50)); two=$((2 * (mtu + 14))); ((burst > two)) || burst=$two

# Line rate: raw frames of lanecast's size through both tbf (segment = MTU - 72).
frame=$((mtu + 14))
out=$(timeout 30 ip netns exec "${tag}p" "$probe" --tx p0 --rx p1 --frame "$frame" --seconds 2 --warmup 0.5)
line=$(tr ' ' '\n' <<<"$out" | awk -F= '$1 == "payload_MBps" { print $2 }')
echo "# process testbed: $nodes member processes, $lanes lane(s) (a switch each), tbf $rate Mbit/s burst $burst B latency 5 ms both ways, MTU $mtu"
echo "# line rate (link_probe p0->p1, $frame-byte frames): $line MB/s payload"

# af_packet ring frames must hold the MTU (see shaped_testbed.sh).
ring=""
need=$((34 + mtu + 14))
if ((need > 2048)); then
  framesz=$(((need + 1023) / 1024 * 1024)); page=$(getconf PAGESIZE)
  g=$framesz; b=$page; while ((b)); do t=$((g % b)); g=$b; b=$t; done
  blocksz=$((framesz / g * page)); per=$((blocksz / framesz))
  ring=",framesz=$framesz,blocksz=$blocksz,framecnt=$(((512 + per - 1) / per * per))"
fi
max=$(tr ',' '\n' <<<"$sizes" | awk '{ s = $1; m = 1; u = toupper(substr(s, length(s)));
  if (u == "K") m = 1024; else if (u == "M") m = 1048576; if (m > 1) s = substr(s, 1, length(s) - 1);
  v = s * m; if (v > x) x = v } END { printf "%d", x }')
{
  echo "[group]"
  echo "name = \"process-testbed\""
  echo "id = 33"
  echo "bootstrap = \"discovery\""
  echo "bootstrap_timeout_ms = 30000"
  echo "max_message = $max"
  echo "port_rate_mbit = $rate"
  echo "port_overhead = 0"
  echo "lanes = $lanes"
  for ((i = 0; i < nodes; i++)); do
    printf '\n[[member]]\nrank = %d\nlanes = ["net_af_packet0,iface=v0,qdisc_bypass=0%s"' "$i" "$ring"
    ((lanes == 2)) && printf ', "net_af_packet1,iface=w0,qdisc_bypass=0%s"' "$ring"
    printf ']\n'
  done
} >"$work/group.toml"

tc_drops() {
  { for ((i = 0; i < nodes; i++)); do tc -s -n "${tag}n$i" qdisc show dev v0; done
    tc -s -n "$sw" qdisc show; } | awk '/dropped/ { for (k = 1; k <= NF; k++) if ($k == "dropped") d += $(k + 1) } END { print d + 0 }'
}
drops0=$(tc_drops)
for ((i = 0; i < nodes; i++)); do
  timeout 1800 ip netns exec "${tag}n$i" "$lanecast" bench --config "$work/group.toml" --rank "$i" \
    --algo "$algos" --sizes "$sizes" --iters "$iters" --warmup "$warmup" --yield-when-idle "${extra[@]}" \
    >"$work/rank$i.out" 2>&1 &
  pids+=($!)
done
status=0
for ((i = 0; i < nodes; i++)); do
  wait "${pids[i]}" || { status=1; echo "# rank $i failed:"; sed 's/^/#   /' "$work/rank$i.out"; }
done
pids=()
drops=$(($(tc_drops) - drops0))
awk -v line="$line" '
  /^#/ { print; next }
  /^algo/ { printf "%s %7s\n", $0, "x_line"; next }
  NF >= 8 { printf "%s %7.3f\n", $0, ($6 + 0) / line; next }
  { print }' "$work/rank0.out"
echo "# tc drops over every link during the run: $drops"
# Each member's counters, when asked for (-- --counters).
for ((i = 0; i < nodes; i++)); do grep -A1 "^rank $i:" "$work/rank$i.out" || true; done
exit $status
