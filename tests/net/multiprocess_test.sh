#!/usr/bin/env bash
# One member per process, each in its own network namespace with one veth to
# a Linux bridge in another: `lanecast run` joins the group from a group file
# and every member checks every byte. Both bootstraps run - static (addresses
# from the file) and discovery (hellos on the wire) - and must give the same
# endpoint table. Everything this test creates is removed on any exit.
#
# With the example application's path, it also runs that (the engine linked
# as a library) on the static group.
#
# usage: multiprocess_test.sh path/to/lanecast [NODES [path/to/join_and_broadcast]]
set -u
bin=${1:?usage: multiprocess_test.sh path/to/lanecast [NODES [path/to/join_and_broadcast]]}
nodes=${2:-3}
example=${3:-}
if [[ $(id -u) -ne 0 ]] || ! command -v ip >/dev/null; then
  echo "SKIP: needs root and iproute2 to create namespaces, a bridge and veths"
  exit 77
fi
tag=lcmp$$
# shellcheck source=tests/net/member_net.sh
source "$(dirname "${BASH_SOURCE[0]}")/member_net.sh"
member_net_test "$tag" "$nodes"
# Group files: every member's port is "v0" in its own namespace.
write_group() { write_member_group "$1" "$2" "mp$nodes" 21 20000 4M "$nodes"; }  # BOOTSTRAP FILE

status=0
# The static members run on polling cores, the discovery members progress in
# their waits (--progress calls); both print their placement.
declare -A progress=([static]=cores [discovery]=calls)
declare -A placed=([static]="^polling core: lcore [0-9]+ on CPU [0-9]+ \(of [0-9]+\), every lane of the member on it$"
                   [discovery]="^polling: no polling core; the application's thread, inside its waits$")
for boot in static discovery; do
  write_group "$boot" "$work/$boot.toml"
  pids=()
  for ((i = 0; i < nodes; i++)); do
    timeout 120 ip netns exec "${tag}n$i" "$bin" run --config "$work/$boot.toml" --rank "$i" --yield-when-idle \
      --sizes 1,1428,1429,64K,1M,4M --iters 2 --show-endpoints --show-placement --progress "${progress[$boot]}" \
      >"$work/$boot.$i.out" 2>&1 &
    pids+=($!)
  done
  for ((i = 0; i < nodes; i++)); do
    wait "${pids[i]}"
    rc=$?
    sed "s/^/[$boot rank $i] /" "$work/$boot.$i.out"
    if [[ $rc -ne 0 ]]; then
      echo "FAIL: $boot bootstrap, rank $i exited $rc"
      status=1
    elif [[ $(grep -c " yes$" "$work/$boot.$i.out") -ne 6 ]]; then
      echo "FAIL: $boot bootstrap, rank $i did not verify all 6 sizes"
      status=1
    elif ! grep -qx "lane 0: iface v0, no PCI device: any CPU" "$work/$boot.$i.out" ||
         ! grep -qE "${placed[$boot]}" "$work/$boot.$i.out"; then
      echo "FAIL: $boot bootstrap, rank $i did not show its placement (${progress[$boot]})"
      status=1
    elif [[ $(grep -c "^lanecast: notice: group .* has no key: anyone on its network segment" "$work/$boot.$i.out") -ne 1 ]]; then
      echo "FAIL: $boot bootstrap, rank $i did not say once that its group has no key"
      status=1
    fi
  done
  pids=()
  grep "^rank [0-9]* lane" "$work/$boot.0.out" >"$work/$boot.endpoints"
done
if [[ -n $example ]]; then
  pids=()
  for ((i = 0; i < nodes; i++)); do
    timeout 60 ip netns exec "${tag}n$i" "$example" "$work/static.toml" "$i" >"$work/example.$i.out" 2>&1 &
    pids+=($!)
  done
  for ((i = 0; i < nodes; i++)); do
    wait "${pids[i]}"
    rc=$?
    sed "s/^/[example rank $i] /" "$work/example.$i.out"
    if [[ $rc -ne 0 ]] || ! grep -q "rank $i of $nodes got: hello from rank 0" "$work/example.$i.out"; then
      echo "FAIL: the example application, rank $i (exit $rc)"
      status=1
    fi
  done
  pids=()
fi
# A member process killed mid-broadcast: every survivor names it within
# twice the peer timeout, re-forms the group without it (a new epoch) and
# serves on, checking every byte, until told to stop.
if ((nodes >= 3)); then
  write_group discovery "$work/kill.toml"
  sed -i 's/^peer_timeout_ms = .*/peer_timeout_ms = 1000/; s/^\[group\]$/[group]\nalgo = "chain"/' "$work/kill.toml"
  victim=1
  pids=()
  for ((i = 0; i < nodes; i++)); do
    timeout 120 ip netns exec "${tag}n$i" "$bin" run --config "$work/kill.toml" --rank "$i" \
      --sizes 256K --iters 50 --serve --reform --yield-when-idle >"$work/kill.$i.out" 2>&1 &
    pids+=($!)
  done
  # Past the bootstrap (well under a second here), into the broadcasts.
  for ((t = 0; t < 100; t++)); do
    sleep 0.05
    grep -q "^# lanecast run" "$work/kill.0.out" && break
  done
  sleep 0.5
  # The member itself, not the `timeout` that runs it.
  pkill -9 -f -- "--config $work/kill.toml --rank $victim " || echo "FAIL: no rank $victim process to kill"
  killed=$(date +%s%N)
  for ((t = 0; t < 200; t++)); do  # at most 10 s
    seen=0
    for ((i = 0; i < nodes; i++)); do
      ((i == victim)) || ! grep -q "FAILED" "$work/kill.$i.out" || seen=$((seen + 1))
    done
    ((seen == nodes - 1)) && break
    sleep 0.05
  done
  noticed_ms=$((($(date +%s%N) - killed) / 1000000))
  echo "# killed rank $victim: every survivor failed its broadcast within ${noticed_ms} ms (peer timeout 1000 ms)"
  # Serving on in the re-formed group: stop them once each finished a round.
  for ((t = 0; t < 200; t++)); do  # at most 10 s
    seen=0
    for ((i = 0; i < nodes; i++)); do
      ((i == victim)) || ! sed -n '/^# re-formed/,$p' "$work/kill.$i.out" | grep -q " yes$" || seen=$((seen + 1))
    done
    ((seen == nodes - 1)) && break
    sleep 0.05
  done
  # The root's signal stops them all at the end of a round.
  pkill -TERM -f -- "--config $work/kill.toml --rank 0 " || true
  for ((i = 0; i < nodes; i++)); do
    wait "${pids[i]}"
    rc=$?
    sed "s/^/[kill rank $i] /" "$work/kill.$i.out"
    ((i == victim)) && continue
    if [[ $rc -ne 0 ]]; then
      echo "FAIL: survivor rank $i exited $rc"
      status=1
    elif ! grep -q "FAILED: .*rank $victim" "$work/kill.$i.out"; then
      echo "FAIL: survivor rank $i did not name rank $victim"
      status=1
    elif ! grep -q "^# re-formed" "$work/kill.$i.out" || ! grep -q " yes$" "$work/kill.$i.out"; then
      echo "FAIL: survivor rank $i did not re-form the group and go on"
      status=1
    fi
  done
  pids=()
  # Generous: a hang fails, a slow machine does not.
  if ((noticed_ms > 5000)); then
    echo "FAIL: survivors took ${noticed_ms} ms to notice"
    status=1
  fi
fi
# Two lanes: each member's second port (w0, the same MAC) on a second bridge;
# `auto` picks multilane for two lanes, and every byte must still arrive.
ip -n "${tag}s" link add br1 type bridge
ip -n "${tag}s" link set br1 up
for ((i = 0; i < nodes; i++)); do
  ip -n "${tag}n$i" link add w0 address "$(member_mac "$i")" type veth peer name "c$i" netns "${tag}s"
  ip -n "${tag}s" link set "c$i" master br1 up
  ip -n "${tag}n$i" link set w0 up
done
sed 's/^\[group\]$/[group]\nlanes = 2/; s/^lanes = \["net_af_packet0,iface=v0,qdisc_bypass=0"\]$/lanes = ["net_af_packet0,iface=v0,qdisc_bypass=0", "net_af_packet1,iface=w0,qdisc_bypass=0"]/' \
  "$work/discovery.toml" >"$work/two.toml"
pids=()
for ((i = 0; i < nodes; i++)); do
  timeout 120 ip netns exec "${tag}n$i" "$bin" run --config "$work/two.toml" --rank "$i" --yield-when-idle \
    --sizes 1,64K,1M,4M --iters 2 >"$work/two.$i.out" 2>&1 &
  pids+=($!)
done
for ((i = 0; i < nodes; i++)); do
  wait "${pids[i]}"
  rc=$?
  sed "s/^/[two lanes rank $i] /" "$work/two.$i.out"
  if [[ $rc -ne 0 || $(grep -c " yes$" "$work/two.$i.out") -ne 4 ]]; then
    echo "FAIL: two lanes, rank $i (exit $rc)"
    status=1
  fi
done
pids=()

# Two processes started with the same rank: refused by name (whichever hears
# the other first), and nobody hangs or forms a group.
sed 's/^bootstrap_timeout_ms = .*/bootstrap_timeout_ms = 5000/' "$work/discovery.toml" >"$work/dup.toml"
pids=()
for ((i = 0; i < nodes; i++)); do
  r=$i
  ((i == 1)) && r=0
  timeout 60 ip netns exec "${tag}n$i" "$bin" run --config "$work/dup.toml" --rank "$r" --sizes 1K --iters 1 --yield-when-idle \
    >"$work/dup.$i.out" 2>&1 &
  pids+=($!)
done
for ((i = 0; i < nodes; i++)); do
  wait "${pids[i]}"
  rc=$?
  sed "s/^/[duplicate rank, process $i] /" "$work/dup.$i.out"
  if [[ $rc -ne 3 ]]; then
    echo "FAIL: process $i exited $rc, not 3 (the bootstrap failed)"
    status=1
  fi
done
pids=()
if ! cat "$work"/dup.*.out | grep -q "started as rank 0 too\|answers from two addresses"; then
  echo "FAIL: nobody named the duplicate rank 0"
  status=1
fi
if ! cmp -s "$work/static.endpoints" "$work/discovery.endpoints"; then
  echo "FAIL: the static and discovery bootstraps found different endpoint tables:"
  diff "$work/static.endpoints" "$work/discovery.endpoints"
  status=1
fi
[[ -s $work/static.endpoints ]] || { echo "FAIL: no endpoint table printed"; status=1; }
exit $status
