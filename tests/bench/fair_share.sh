#!/usr/bin/env bash
# Fair sharing of one bottleneck (issue 21): two switches joined by one
# shaped link, and flows that must cross it.
#
#   switch A (bridge bra)  ==== RATE Mbit/s both ways (tbf) ====  switch B (bridge brb)
#     group 1 rank 0                                               group 1 ranks 1..3
#     group 2 rank 0                                               group 2 ranks 1..3
#     TCP client (iperf3)                                          TCP server
#
# Every member is its own process in its own namespace, on an unshaped veth
# to its switch: the one link between the switches is the only bottleneck,
# and each group's broadcast crosses it once (its root is on A, every
# receiver on B). The groups find their rates themselves (group file:
# rate_control = true, no port_rate_mbit).
#
#   groups  both groups broadcast SIZE messages at once; each one's share is
#           what its root's switch port took in over a window in which both
#           run, as a fraction of RATE; Jain's index over the two.
#   tcp     group 1 alone with an iperf3 TCP flow (congestion control
#           --tcp-cc, default cubic: Linux's usual default) from A to B over
#           the same window: each one's share.
# Both groups (and the tcp run's group) verify every byte; a member that
# fails fails the script.
#
# usage: tests/bench/fair_share.sh [--mode groups|tcp|both] [--rate MBIT] [--queue-ms MS]
#          [--algo NAME] [--size SIZE] [--window S] [--mtu M] [--tcp-cc cubic|bbr|reno] [--lanecast PATH]
# Needs root, iproute2 and iperf3 (tcp).
set -euo pipefail

mode=both rate=200 queue_ms=5 algo=chain size=8M window=10 mtu=1500 cc=cubic
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
lanecast=$repo/build/apps/lanecast
while (($#)); do
  case $1 in
    --mode) mode=$2; shift ;;
    --rate) rate=$2; shift ;;
    --queue-ms) queue_ms=$2; shift ;;
    --algo) algo=$2; shift ;;
    --size) size=$2; shift ;;
    --window) window=$2; shift ;;
    --mtu) mtu=$2; shift ;;
    --tcp-cc) cc=$2; shift ;;
    --lanecast) lanecast=$2; shift ;;
    -h|--help) sed -n '2,26p' "$0"; exit 0 ;;
    *) echo "fair_share: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
case $mode in groups|tcp|both) ;; *) echo "fair_share: --mode is groups, tcp or both" >&2; exit 2 ;; esac
[[ $(id -u) -eq 0 ]] || { echo "fair_share: needs root" >&2; exit 2; }
[[ -x $lanecast ]] || { echo "fair_share: no lanecast at $lanecast (build first)" >&2; exit 2; }
if [[ $mode != groups ]] && ! command -v iperf3 >/dev/null; then
  echo "fair_share: --mode $mode needs iperf3 (apt-get install iperf3)" >&2
  exit 2
fi
# shellcheck source=tests/bench/member_group.sh
source "$repo/tests/bench/member_group.sh"

tag=lcfs$(($$ % 100000))
sw=${tag}sw
work=$(mktemp -d)
made=()
cleanup() {
  pkill -9 -f -- "--config $work/" 2>/dev/null || true
  pkill -9 -f -- "iperf3 .*--logfile $work/" 2>/dev/null || true
  local ns
  for ns in "${made[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mk_ns() {  # NAME
  ip netns add "$1"
  made+=("$1")
  ip -n "$1" link set lo up
  ip netns exec "$1" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
}

# A node: namespace NS with v0 on BRIDGE (switch port PORT), MAC MAC.
node() {  # NS PORT BRIDGE MAC
  mk_ns "$1"
  ip -n "$1" link add v0 address "$4" mtu "$mtu" type veth peer name "$2" netns "$sw"
  ip -n "$sw" link set "$2" mtu "$mtu" master "$3" up
  ip -n "$1" link set v0 up
}

# The switches and the shaped link between them: tbf on both ends, a switch
# port's queue (QUEUE_MS of the rate), burst about 400 us of the rate as on
# `lanecast testbed`.
mk_ns "$sw"
burst=$((rate * 1000000 / 8 * 400 / 1000000))
((burst < mtu + 14)) && burst=$((mtu + 14))
for br in bra brb; do
  ip -n "$sw" link add "$br" type bridge
  ip -n "$sw" link set "$br" mtu "$mtu" up
done
ip -n "$sw" link add xa mtu "$mtu" type veth peer name xb mtu "$mtu"
ip -n "$sw" link set xa master bra up
ip -n "$sw" link set xb master brb up
for dev in xa xb; do
  tc -n "$sw" qdisc replace dev "$dev" root tbf rate "${rate}mbit" burst "$burst" latency "${queue_ms}ms"
done

# Members: group G rank R in ${tag}g<G>r<R>, switch port g<G>r<R>.
for g in 1 2; do
  for r in 0 1 2 3; do
    br=brb
    ((r == 0)) && br=bra
    node "${tag}g${g}r$r" "g${g}r$r" "$br" "$(printf '02:6c:%02x:00:%02x:%02x' $((RANDOM % 256)) "$g" "$r")"
  done
done
if [[ $mode != groups ]]; then
  node "${tag}t0" t0 bra 02:6c:74:00:00:01
  node "${tag}t1" t1 brb 02:6c:74:00:00:02
  ip -n "${tag}t0" addr add 10.77.0.1/24 dev v0
  ip -n "${tag}t1" addr add 10.77.0.2/24 dev v0
fi

ring=$(ring_devargs "$mtu")
max_message=$(size_bytes "$size")
group_file() {  # G
  local f=$work/group$1.toml r
  {
    printf '[group]\nname = "fair%d"\nid = %d\nbootstrap = "discovery"\nbootstrap_timeout_ms = 30000\n' "$1" $((4100 + $1))
    printf 'max_message = %d\nrate_control = true\nlanes = 1\n' "$max_message"
    for r in 0 1 2 3; do
      printf '\n[[member]]\nrank = %d\nlanes = ["net_af_packet0,iface=v0,qdisc_bypass=0%s"]\n' "$r" "$ring"
    done
  } >"$f"
  echo "$f"
}

# Group G broadcasting SIZE ITERS times in the background: its members' pids
# in pids_G, their outputs in $work/g<G>/rank<R>.out.
declare -A pids
start_group() {  # G ITERS
  local f r
  f=$(group_file "$1")
  mkdir -p "$work/g$1"
  pids[$1]=""
  for r in 0 1 2 3; do
    timeout 900 ip netns exec "${tag}g${1}r$r" "$lanecast" bench --config "$f" --rank "$r" --yield-when-idle \
      --algo "$algo" --sizes "$size" --iters "$2" --warmup 1 --counters >"$work/g$1/rank$r.out" 2>&1 &
    pids[$1]+=" $!"
  done
}
wait_group() {  # G: nonzero (and the failing members' output) if any member failed
  local p r=0 rc=0
  for p in ${pids[$1]}; do
    wait "$p" || { rc=1; echo "# group $1 rank $r failed:"; sed 's/^/#   /' "$work/g$1/rank$r.out"; }
    r=$((r + 1))
  done
  return $rc
}

# What group G's root's rate control did (bench --counters): "raised N, cut
# for delay N, cut for loss N, rate at the end N Mbit/s, resent N of N".
root_rate() {  # G
  awk '/^rank 0:/ { for (i = 3; i <= NF; i++) { split($i, kv, "="); c[kv[1]] = kv[2] } }
    END { printf "raised %d, cut for delay %d, cut for loss %d, rate at the end %d Mbit/s, resent %d of %d frames\n",
          c["rate_raised"], c["rate_cut_delay"], c["rate_cut_loss"], c["rate_mbit"], c["tx_retransmits"], c["tx_data"] }' \
    "$work/g$1/rank0.out"
}

# Bytes switch port PORT took in (what its node sent).
port_rx() { ip -n "$sw" -s -j link show "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["stats64"]["rx"]["bytes"])'; }

# Waits (bounded) until every PORT has taken in more than 1 MB: its flow runs.
wait_flowing() {  # PORT...
  local p i
  for ((i = 0; i < 600; i++)); do
    local all=1
    for p in "$@"; do (($(port_rx "$p") > 1000000)) || all=0; done
    ((all)) && return 0
    sleep 0.1
  done
  echo "fair_share: a flow never started (ports $*)" >&2
  return 1
}

# Each PORT's rate over WINDOW seconds as a fraction of RATE, printed as
# "PORT FRACTION" lines.
shares() {  # PORT...
  local p
  declare -A before
  for p in "$@"; do before[$p]=$(port_rx "$p"); done
  local t0 t1
  t0=$(date +%s.%N)
  sleep "$window"
  t1=$(date +%s.%N)
  for p in "$@"; do
    awk -v b="${before[$p]}" -v a="$(port_rx "$p")" -v t0="$t0" -v t1="$t1" -v rate="$rate" -v p="$p" \
      'BEGIN { printf "%s %.3f\n", p, (a - b) * 8 / (t1 - t0) / (rate * 1e6) }'
  done
}

# Enough broadcasts to outlast warm-up, the window and a margin at half the
# link each: SIZE at RATE/2, (WINDOW + 15) seconds' worth.
iters=$(awk -v s="$max_message" -v r="$rate" -v w="$window" 'BEGIN { n = (w + 15) * r * 1e6 / 2 / 8 / s; printf "%d", n < 5 ? 5 : n }')
echo "# fair_share: link $rate Mbit/s (tbf, queue ${queue_ms} ms, burst $burst B) between two switches, MTU $mtu;"
echo "# groups of 4 member processes, root on one side, 3 receivers on the other; algo $algo, $size x $iters,"
echo "# rate_control = true, no port_rate_mbit; shares of the link over a ${window} s window in which every flow runs"

rc=0
if [[ $mode == groups || $mode == both ]]; then
  start_group 1 "$iters"
  start_group 2 "$iters"
  wait_flowing g1r0 g2r0
  sleep 3  # past slow start
  mapfile -t got < <(shares g1r0 g2r0)
  wait_group 1 || rc=1
  wait_group 2 || rc=1
  x1=${got[0]#* } x2=${got[1]#* }
  jain=$(awk -v a="$x1" -v b="$x2" 'BEGIN { printf "%.3f", (a + b) ^ 2 / (2 * (a * a + b * b)) }')
  echo
  echo "| flow | share of the link | verified |"
  echo "| --- | ---: | --- |"
  for g in 1 2; do
    x=${got[g - 1]#* }
    ok=no
    grep -qE "^ *$algo .* yes" "$work/g$g/rank0.out" && ok=yes
    echo "| lanecast group $g ($algo) | $x | $ok |"
  done
  echo "| both | $(awk -v a="$x1" -v b="$x2" 'BEGIN { printf "%.3f", a + b }') | Jain's index $jain |"
  echo
  for g in 1 2; do
    grep -E "^ *$algo " "$work/g$g/rank0.out" | sed "s/^/# group $g rank 0: /"
    echo "# group $g rank 0's rate control: $(root_rate "$g")"
  done
fi

if [[ $mode == tcp || $mode == both ]]; then
  # A fresh count for group 1: its ports are reused.
  start_group 1 "$iters"
  ip netns exec "${tag}t1" iperf3 -s -1 --logfile "$work/iperf3-server.log" >/dev/null 2>&1 &
  server=$!
  wait_flowing g1r0
  sleep 3
  ip netns exec "${tag}t0" iperf3 -c 10.77.0.2 -C "$cc" -t $((window + 6)) -J --logfile "$work/iperf3.json" >/dev/null 2>&1 &
  client=$!
  wait_flowing t0
  sleep 3  # past TCP's slow start
  mapfile -t got < <(shares g1r0 t0)
  wait "$client" || { echo "# iperf3 failed:"; sed 's/^/#   /' "$work/iperf3.json"; rc=1; }
  wait "$server" || true
  wait_group 1 || rc=1
  tcp_total=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("%.1f" % (d["end"]["sum_received"]["bits_per_second"] / 1e6))' "$work/iperf3.json" 2>/dev/null || echo "?")
  ok=no
  grep -qE "^ *$algo .* yes" "$work/g1/rank0.out" && ok=yes
  echo
  echo "| flow | share of the link | verified |"
  echo "| --- | ---: | --- |"
  echo "| lanecast group 1 ($algo) | ${got[0]#* } | $ok |"
  echo "| TCP (iperf3, $cc) | ${got[1]#* } | iperf3: $tcp_total Mbit/s over its $((window + 6)) s |"
  echo
  echo "# group 1 rank 0's rate control: $(root_rate 1)"
fi
exit $rc
