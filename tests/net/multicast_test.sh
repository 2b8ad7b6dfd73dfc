#!/usr/bin/env bash
# Real Ethernet multicast on a Linux bridge, one member process per namespace:
#  1. mcast_chain multicasts to the group's address (the header says "by the
#     switch"), with half of the multicast frames dropped at every receiver
#     (--mcast-loss 0.5), and every byte of 2 B .. 1 MiB still arrives;
#  2. the group address is on each member's interface multicast list
#     (`ip maddr`) while it runs, and gone after every way out: a normal exit,
#     an error exit (a peer lost), SIGINT, SIGTERM, SIGKILL;
#  3. two groups on one bridge at once: each verifies its own bytes, and the
#     other group's multicast frames, which the bridge floods to every
#     port, reach each member's interface but not its port: the kernel's
#     filter on the port's sockets drops them (drivers/dpdk/kernel_rx_filter.h).
# Everything this test creates is removed on any exit.
#
# usage: multicast_test.sh path/to/lanecast
set -u
bin=$(realpath "${1:?usage: multicast_test.sh path/to/lanecast}")
if [[ $(id -u) -ne 0 ]] || ! command -v ip >/dev/null; then
  echo "SKIP: needs root and iproute2 to create namespaces, a bridge and veths"
  exit 77
fi
nodes=6
tag=lcmc$$
# shellcheck source=tests/net/member_net.sh
source "$(dirname "${BASH_SOURCE[0]}")/member_net.sh"
member_net_test "$tag" "$nodes"
status=0
fail() { echo "FAIL: $*"; status=1; }

# The link-layer multicast addresses of v0 in namespace I, one per line.
maddrs() { ip -n "${tag}n$1" maddr show dev v0 | awk '$1 == "link" {print $2}' | sort; }
for ((i = 0; i < nodes; i++)); do maddrs "$i" >"$work/base.$i"; done
# Addresses on v0 of namespace I beyond those it had before any member ran.
extra() { comm -13 "$work/base.$1" <(maddrs "$1"); }

# Group file NAME for COUNT members, discovery, peer timeout MS.
group() {  # FILE NAME ID COUNT PEER_TIMEOUT_MS
  write_member_group discovery "$1" "$2" "$3" 20000 1M "$4"
  sed -i "s/^peer_timeout_ms = .*/peer_timeout_ms = $5/" "$1"
}
# Starts `lanecast ARGS...` as rank R of FILE in namespace I; output to OUT.
start() {  # I FILE R OUT ARGS...
  local ns=${tag}n$1 file=$2 r=$3 out=$4
  shift 4
  timeout 120 ip netns exec "$ns" "$bin" "$@" --config "$file" --rank "$r" --yield-when-idle >"$out" 2>&1 &
  pids+=($!)
}
# Waits (at most 10 s) until namespace I's v0 has a lanecast group address.
await_join() {  # I
  local t
  for ((t = 0; t < 200; t++)); do
    [[ -n $(extra "$1") ]] && return 0
    sleep 0.05
  done
  return 1
}

# --- 1. mcast_chain over real multicast, half the multicasts lost ----------
group "$work/g3.toml" mc3 31 3 3000
sed -i 's/^\[group\]$/[group]\nmcast_loss = 0.5\nmcast_loss_seed = 7/' "$work/g3.toml"
pids=()
for ((i = 0; i < 3; i++)); do
  start "$i" "$work/g3.toml" "$i" "$work/loss.$i.out" bench --algo mcast_chain --sizes 2,1428,1429,64K,1M \
    --iters 5 --warmup 1 --counters
done
for ((i = 0; i < 3; i++)); do
  wait "${pids[i]}"
  rc=$?
  sed "s/^/[loss rank $i] /" "$work/loss.$i.out"
  [[ $rc -eq 0 ]] || fail "mcast_chain with half the multicasts lost: rank $i exited $rc"
done
pids=()
grep -q "^# multicast: by the switch, one frame per multicast to group " "$work/loss.0.out" ||
  fail "the header does not say the switch multicasts"
grep -q "each receiver drops 50% of multicast frames" "$work/loss.0.out" || fail "the header does not state the loss"
[[ $(grep -c " yes " "$work/loss.0.out") -eq 5 ]] || fail "not all 5 sizes verified with 50% multicast loss"
for ((i = 1; i < 3; i++)); do
  lost=$(sed -n 's/.* lost_emulated=\([0-9]*\).*/\1/p' "$work/loss.$i.out")
  [[ ${lost:-0} -gt 0 ]] || fail "rank $i reports no multicast frame dropped (lost_emulated)"
done

# --- 2. no address left programmed after any exit ----------------------------
group "$work/g2.toml" mc2 32 2 500
# Until no member process of FILE is left (at most 10 s): a signal reaches
# the `timeout` wrappers too, whose end says nothing of their children's.
await_gone() {  # FILE
  local t
  for ((t = 0; t < 200; t++)); do
    pgrep -f -- "--config $1 --rank " >/dev/null || return 0
    sleep 0.05
  done
  fail "members of $1 still running 10 s after they were stopped"
}
# pgrep stops seeing a process once its memory is gone, which the kernel
# frees before it closes the process's sockets - and with them its
# multicast memberships - so each list gets up to 5 s to come back.
check_clean() {  # WHAT I...
  local what=$1 i t
  shift
  for i in "$@"; do
    for ((t = 0; t < 100; t++)); do
      [[ -z $(extra "$i") ]] && break
      sleep 0.05
    done
    if [[ -n $(extra "$i") ]]; then
      fail "$what: v0 of member $i still has $(extra "$i" | tr '\n' ' ')"
    else
      echo "# $what: member $i's v0 multicast list is back to what it was"
    fi
  done
}
# A normal exit.
pids=()
for ((i = 0; i < 2; i++)); do start "$i" "$work/g2.toml" "$i" "$work/normal.$i.out" run --sizes 2,64K --iters 3; done
for ((i = 0; i < 2; i++)); do wait "${pids[i]}" || fail "normal exit: rank $i exited $?"; done
pids=()
await_gone "$work/g2.toml"
check_clean "normal exit" 0 1
# Serving members stopped by a signal; each must have joined first.
for sig in INT TERM KILL; do
  pids=()
  for ((i = 0; i < 2; i++)); do start "$i" "$work/g2.toml" "$i" "$work/$sig.$i.out" run --sizes 2 --iters 10 --serve; done
  for ((i = 0; i < 2; i++)); do
    await_join "$i" || fail "SIG$sig: member $i never joined a group address"
    echo "# SIG$sig: member $i joined $(extra "$i" | tr '\n' ' ')"
  done
  pkill "-$sig" -f -- "--config $work/g2.toml --rank " || fail "SIG$sig: no member to signal"
  for ((i = 0; i < 2; i++)); do wait "${pids[i]}"; done
  pids=()
  await_gone "$work/g2.toml"
  check_clean "SIG$sig" 0 1
done
# An error exit: rank 1 dies, rank 0's broadcast fails after the peer timeout.
pids=()
for ((i = 0; i < 2; i++)); do start "$i" "$work/g2.toml" "$i" "$work/error.$i.out" run --sizes 2 --iters 10 --serve; done
await_join 0 || fail "error exit: member 0 never joined"
pkill -9 -f -- "--config $work/g2.toml --rank 1 " || fail "error exit: no rank 1 to kill"
wait "${pids[0]}"
rc=$?
wait "${pids[1]}"
pids=()
await_gone "$work/g2.toml"
sed "s/^/[error rank 0] /" "$work/error.0.out" | tail -5
[[ $rc -ne 0 ]] || fail "error exit: rank 0 exited 0 although its peer died"
check_clean "error exit (rank 0 exited $rc)" 0

# --- 3. two groups on one bridge at once -------------------------------------
# Frames namespace I's v0 has received.
iface_rx() { ip netns exec "${tag}n$1" cat /sys/class/net/v0/statistics/rx_packets; }
declare -a rx_before
for ((i = 0; i < 6; i++)); do rx_before[i]=$(iface_rx "$i"); done
group "$work/ga.toml" mca 41 3 3000
group "$work/gb.toml" mcb 42 3 3000
pids=()
for ((i = 0; i < 3; i++)); do
  start "$i" "$work/ga.toml" "$i" "$work/a.$i.out" bench --algo mcast_chain --sizes 2,1429,64K --iters 200 --counters
  start $((i + 3)) "$work/gb.toml" "$i" "$work/b.$i.out" bench --algo mcast_chain --sizes 2,1429,64K --iters 200 \
    --counters
done
for ((k = 0; k < 6; k++)); do
  wait "${pids[k]}" || fail "two groups: process $k exited $?"
done
pids=()
kept_out=0
for g in a b; do
  sed "s/^/[group $g rank 0] /" "$work/$g.0.out"
  [[ $(grep -c " yes " "$work/$g.0.out") -eq 3 ]] || fail "group $g did not verify its 3 sizes"
  for ((i = 0; i < 3; i++)); do
    node=$i
    [[ $g == b ]] && node=$((i + 3))
    n=$(sed -n 's/.* rx_not_for_us=\([0-9]*\).*/\1/p' "$work/$g.$i.out")
    port_rx=$(sed -n 's/^ *port: rx=\([0-9]*\) .*/\1/p' "$work/$g.$i.out")
    iface=$(($(iface_rx "$node") - rx_before[node]))
    echo "# group $g rank $i: interface took in $iface frames, the port $port_rx, the engine refused ${n:-0} (rx_not_for_us)"
    kept_out=$((kept_out + iface - ${port_rx:-0}))
  done
done
[[ $(sed -n 's/^# multicast: .* to group \([0-9a-f:]*\) .*/\1/p' "$work/a.0.out") != \
   $(sed -n 's/^# multicast: .* to group \([0-9a-f:]*\) .*/\1/p' "$work/b.0.out") ]] ||
  fail "the two groups multicast to the same address"
# Each group multicast 3 x 200 x (2 + 1429 + 64K) bytes: about 10 000
# frames flooded to the other's 3 ports; the kernel kept most of them out.
((kept_out > 5000)) || fail "the ports took in the other group's frames: only $kept_out of the interfaces' frames were kept out"
echo "# frames the interfaces took in that the kernel kept out of the ports: $kept_out"
exit $status
