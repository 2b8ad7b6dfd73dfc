#!/usr/bin/env bash
# `lanecast testbed` and `lanecast bench --testbed` on this machine's kernel:
#   1. testbed up/status/down: the names, MACs, IPs and tbf parameters the
#      scripts rely on, two lanes on two bridges, bridges that do not call
#      iptables; nothing left after down.
#      On it, two member processes with two polling cores each: lane 1's
#      frames moved by the second core (run --show-placement), every byte of
#      a multilane broadcast verified
#   2. a step that fails (a tc that refuses, first on PATH): up names the
#      command and what it said, exits 3, and removes what it built
#   3. bench --testbed 3: every size verified, the tc table printed, no
#      namespace and no member process left
#   4. a member killed mid-broadcast (found by its namespace: ip netns pids):
#      bench --testbed exits 1 naming the rank, every survivor failed naming
#      it, all within twice the peer timeout (and a margin for a slow
#      machine), nothing left
#   5. SIGTERM to bench --testbed mid-run: exit 143, nothing left
#   6. bench --testbed | head: SIGPIPE stops it as SIGTERM does - exit 141,
#      nothing left
# Every wait is bounded; whatever a failing step leaves is removed on exit.
#
# usage: testbed_test.sh path/to/lanecast
set -u
bin=${1:?usage: testbed_test.sh path/to/lanecast}
bin=$(realpath "$bin")
if [[ $(id -u) -ne 0 ]] || ! command -v ip >/dev/null || ! command -v tc >/dev/null; then
  echo "SKIP: needs root and iproute2 (ip, tc) to build namespaces, bridges, veths and qdiscs"
  exit 77
fi
work=$(mktemp -d)
names=()  # every testbed this test may have made
bench_pid=
cleanup() {
  [[ -n $bench_pid ]] && kill -9 "$bench_pid" 2>/dev/null
  for n in "${names[@]}"; do "$bin" testbed down --name "$n" >/dev/null 2>&1; done
  rm -rf "$work"
}
trap cleanup EXIT INT TERM
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# Namespaces of testbed $1 still there.
left() { ip netns list | awk '{ print $1 }' | grep -E "^$1(n[0-9]+|s|p)$"; }
# The testbed name and the group file a bench --testbed run printed in its header.
name_in() { sed -n 's/.*namespace of testbed \([a-z0-9]*\) .*/\1/p' "$1" | head -1; }
group_in() { sed -n 's/^# group file \([^ ]*\) .*/\1/p' "$1" | head -1; }
# Member processes of the run whose header is in $1 still running.
members_left() { local g; g=$(group_in "$1"); [[ -n $g ]] && pgrep -f -- "--config $g " >/dev/null; }
# Waits (at most $2 s) for a line matching $3 in file $1.
wait_for() {
  local t
  for ((t = 0; t < $2 * 10; t++)); do
    grep -q -- "$3" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}

ip netns add "lctt$$" 2>/dev/null || { echo "SKIP: cannot create network namespaces here"; exit 77; }
ip netns del "lctt$$"

# 1. up, status, down.
tb=lctt$(($$ % 10000))
names+=("$tb")
if ! "$bin" testbed up 3 --lanes 2 --rate 100 --mtu 3000 --name "$tb" >"$work/up.out" 2>&1; then
  fail "testbed up: $(cat "$work/up.out")"
else
  grep -q "testbed $tb: 3 nodes" "$work/up.out" || fail "testbed up printed: $(cat "$work/up.out")"
  [[ $(left "$tb" | sort | tr '\n' ' ') == "${tb}n0 ${tb}n1 ${tb}n2 ${tb}p ${tb}s " ]] ||
    fail "testbed up made: $(left "$tb" | tr '\n' ' ')"
  ip -n "${tb}n1" link show v0 | grep -q "link/ether 02:00:00:01:00:01" || fail "n1's v0 has not MAC 02:00:00:01:00:01"
  ip -n "${tb}n1" link show w0 | grep -q "link/ether 02:00:00:01:00:01" || fail "n1's w0 has not v0's MAC"
  ip -n "${tb}n1" link show v0 | grep -q "mtu 3000" || fail "n1's v0 has not MTU 3000"
  ip -n "${tb}n2" addr show v0 | grep -q "inet 10.78.0.3/24" || fail "n2's v0 has not 10.78.0.3/24"
  ip -n "${tb}s" link show b1 | grep -q "master br0" || fail "b1 is not on br0"
  ip -n "${tb}s" link show c1 | grep -q "master br1" || fail "c1 (lane 1) is not on br1"
  ip -n "${tb}p" link show p1 | grep -q "link/ether 02:00:00:02:00:01" || fail "the probe's p1 has not 02:00:00:02:00:01"
  # burst: max(400 us of 100 Mbit/s = 5000 B, two 3014-byte frames) = 6028 B
  # (tc shows it as the kernel rounded it to its clock: 6025b). A node's
  # uplink queues a host NIC's 1000 frames: 3014000 B at 12.5 MB/s = 241 ms
  # (tc shows the limit as the time it takes); a switch port 5 ms.
  tc -n "${tb}n0" qdisc show dev w0 | grep -q "tbf .*rate 100Mbit burst 602[0-9]b lat 24[01]ms" ||
    fail "n0's w0 tbf: $(tc -n "${tb}n0" qdisc show dev w0)"
  tc -n "${tb}s" qdisc show dev c2 | grep -q "tbf .*rate 100Mbit burst 602[0-9]b lat 5ms" ||
    fail "the switch's c2 tbf: $(tc -n "${tb}s" qdisc show dev c2)"
  [[ $(ip netns exec "${tb}n0" sysctl -n net.ipv6.conf.all.disable_ipv6) == 1 ]] || fail "IPv6 is on in n0"
  # The switch filters nothing: where br_netfilter is loaded its bridges
  # do not hand frames to iptables (TCP's would pay for it, lanecast's not).
  for k in iptables ip6tables arptables; do
    v=$(ip netns exec "${tb}s" sysctl -n "net.bridge.bridge-nf-call-$k" 2>/dev/null) || continue  # no br_netfilter
    [[ $v == 0 ]] || fail "the switch's bridges call $k (net.bridge.bridge-nf-call-$k = $v)"
  done
  "$bin" testbed status --name "$tb" >"$work/status.out" 2>&1 || fail "testbed status exited $?"
  # 3 nodes x 2 lanes + 2 probe ports (uplinks: 1000 frames) and 2 x 3
  # switch ports + 2 probe switch ports (5 ms): 16 tbf lines
  [[ $(grep -cE "100Mbit +602[0-9]b +24[01]ms" "$work/status.out") -eq 8 &&
     $(grep -cE "100Mbit +602[0-9]b +5ms" "$work/status.out") -eq 8 ]] || fail "testbed status: $(cat "$work/status.out")"
  # Two lanes, two polling cores: lane 1 gets a core of its own.
  {
    printf '[group]\nname = "lanes2"\nid = 47\nbootstrap = "discovery"\nlanes = 2\nalgo = "multilane"\n'
    printf 'max_message = "1M"\nport_rate_mbit = 100\nbootstrap_timeout_ms = 20000\n'
    for r in 0 1; do
      printf '\n[[member]]\nrank = %d\nlanes = ["net_af_packet0,iface=v0,qdisc_bypass=0", ' "$r"
      printf '"net_af_packet1,iface=w0,qdisc_bypass=0"]\n'
    done
  } >"$work/lanes2.toml"
  for r in 0 1; do
    timeout 60 ip netns exec "${tb}n$r" "$bin" run --config "$work/lanes2.toml" --rank "$r" --cores 2 \
      --yield-when-idle --show-placement --sizes 2,64K,1M --iters 3 >"$work/lanes2.$r.out" 2>&1 &
  done
  wait
  for r in 0 1; do
    sed "s/^/[lanes2 rank $r] /" "$work/lanes2.$r.out"
    [[ $(grep -cE "^ +(2|64K|1M) +3 .* yes$" "$work/lanes2.$r.out") -eq 3 ]] ||
      fail "two lanes, two cores: rank $r did not verify every size"
    grep -q "^lane 1: .*its frames moved by lcore 2 on CPU" "$work/lanes2.$r.out" ||
      fail "two lanes, two cores: rank $r's lane 1 has no core of its own"
  done
  "$bin" testbed up 3 --name "$tb" >"$work/again.out" 2>&1
  rc=$?
  [[ $rc -eq 2 ]] && grep -q "is up already" "$work/again.out" || fail "a second up: exit $rc, $(cat "$work/again.out")"
fi
"$bin" testbed down --name "$tb" >"$work/down.out" 2>&1 || fail "testbed down: $(cat "$work/down.out")"
[[ -z $(left "$tb") ]] || fail "testbed down left $(left "$tb" | tr '\n' ' ')"
"$bin" testbed status --name "$tb" >/dev/null 2>&1
[[ $? -eq 1 ]] || fail "testbed status of a removed testbed did not exit 1"

# 2. A failing step: the command named with what it said; nothing left.
mkdir "$work/fakebin"
printf '#!/bin/sh\necho "RTNETLINK answers: refused by the test" >&2\nexit 2\n' >"$work/fakebin/tc"
chmod +x "$work/fakebin/tc"
PATH=$work/fakebin:$PATH "$bin" testbed up 3 --name "$tb" >"$work/bad.out" 2>&1
rc=$?
[[ $rc -eq 3 ]] || fail "up with a failing tc exited $rc, not 3"
grep -q "tc -n ${tb}n0 qdisc replace dev v0 root tbf rate 200mbit burst 10000 limit 1514000 failed (exit 2): RTNETLINK answers: refused by the test" \
  "$work/bad.out" || fail "up with a failing tc said: $(cat "$work/bad.out")"
[[ -z $(left "$tb") ]] || fail "a failed up left $(left "$tb" | tr '\n' ' ')"

# 3. bench --testbed: verified, counted, removed. The members progress in
# their waits (--testbed's default, --progress calls: no polling thread); the
# kill below runs them on polling cores.
timeout 120 "$bin" bench --testbed 3 --sizes 2,64K --iters 5 --warmup 1 >"$work/bench.out" 2>"$work/bench.err"
rc=$?
sed 's/^/[bench] /' "$work/bench.out" "$work/bench.err"
run=$(name_in "$work/bench.out")
names+=("$run")
[[ $rc -eq 0 ]] || fail "bench --testbed 3 exited $rc"
[[ $(grep -cE "^chain +(2|64K) +5 .* yes " "$work/bench.out") -eq 2 ]] || fail "bench --testbed 3 did not verify both sizes"
grep -q "progress in calls (no polling core)" "$work/bench.out" || fail "bench --testbed 3: members had polling cores (the default is --progress calls)"
grep -q "payload each receiver must get: 1 algo x 6 broadcasts .* = 393228 B" "$work/bench.out" ||
  fail "bench --testbed 3 did not show the payload"
[[ $(grep -cE "^ +[0-2] v0 +[0-9]+" "$work/bench.out") -eq 3 ]] || fail "bench --testbed 3 did not show every link"
[[ -n $run && -z $(left "$run") ]] || fail "bench --testbed left $(left "$run" | tr '\n' ' ') (name '$run')"
members_left "$work/bench.out" && fail "bench --testbed left member processes"

# 3b. --json: one object on stdout that a JSON parser takes - the testbed as
# built (--uplink-queue 0: the 5 ms uplinks of before), each size verified
# with its span and per-rank times, every link's counters; the progress
# lines on stderr only.
timeout 120 "$bin" bench --testbed 3 --uplink-queue 0 --algo chain,bintree --sizes 2,64K --iters 3 --warmup 1 --json \
  >"$work/json.out" 2>"$work/json.err"
rc=$?
names+=("$(name_in "$work/json.err")")
[[ $rc -eq 0 ]] || fail "bench --testbed --json exited $rc: $(tail -3 "$work/json.err")"
grep -q "uplinks 5 ms, switch ports 5 ms" "$work/json.err" || fail "bench --testbed --json: no header on stderr"
if ! python3 - "$work/json.out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t, r, links = d["testbed"], d["results"], d["links"]
assert t["nodes"] == 3 and t["uplink_queue_frames"] == 0 and t["switch_queue_ms"] == 5, t
assert [(x["algo"], x["size"]) for x in r] == [("chain", 2), ("chain", 65536), ("bintree", 2), ("bintree", 65536)], r
for x in r:
    assert x["verified"] is True and x["nodes"] == 3 and x["iters"] == 3, x
    assert len(x["rank_us"]) == 3 and x["rank_us"][0] == 0 and x["span_us"] >= max(x["rank_us"]) - 1e-3, x
    # The median of 3 spans is at most their sum, 3 times their mean.
    assert 0 < x["p50_us"] <= 3 * x["span_us"] + 1e-3, x
assert [(l["rank"], l["lane"]) for l in links] == [(0, "v0"), (1, "v0"), (2, "v0")], links
assert all(l["down_bytes"] >= 2 * (2 + 65536) * 4 for l in links[1:]), links
assert d["payload_bytes"] == 2 * 4 * (2 + 65536) and d["failed"] == "", d
PY
then
  fail "bench --testbed --json printed: $(head -c 600 "$work/json.out")"
fi

# 4. A member killed mid-broadcast.
timeout 120 "$bin" bench --testbed 3 --progress cores --sizes 1M --iters 400 --timeout 1000 >"$work/kill.out" 2>"$work/kill.err" &
bench_pid=$!
victim=1
if wait_for "$work/kill.out" 60 "^algo"; then
  run=$(name_in "$work/kill.out")
  names+=("$run")
  sleep 0.5  # into the broadcasts
  pids=$(ip netns pids "${run}n$victim")
  [[ -n $pids ]] || fail "no process in ${run}n$victim"
  kill -9 $pids
fi
wait "$bench_pid"
rc=$?
bench_pid=
sed 's/^/[kill] /' "$work/kill.out" "$work/kill.err"
[[ $rc -eq 1 ]] || fail "bench --testbed with a killed member exited $rc, not 1"
grep -q "the testbed run failed: rank $victim killed by signal 9" "$work/kill.err" ||
  fail "bench --testbed did not name the killed rank first"
for r in 0 2; do
  grep -qE "# rank $r: exit [13]: lanecast bench: .*(rank $victim stopped acknowledging|lost rank $victim|rank $victim was silent longest)" "$work/kill.out" ||
    fail "survivor rank $r did not fail naming rank $victim"
done
later=$(sed -n 's/.*the last member ended \([0-9]*\) ms later.*/\1/p' "$work/kill.out")
echo "# killed rank $victim: the last survivor ended ${later:-?} ms later (peer timeout 1000 ms)"
# Twice the peer timeout to fail, and then the survivors' exit: generous,
# so that a hang fails and a slow machine does not.
[[ -n $later ]] && ((later <= 5000)) || fail "the survivors took ${later:-forever} ms"
[[ -z $(left "$run") ]] || fail "after the kill, left $(left "$run" | tr '\n' ' ')"
members_left "$work/kill.out" && fail "after the kill, member processes left"

# 5. SIGTERM to bench --testbed mid-run.
timeout 120 "$bin" bench --testbed 3 --sizes 1M --iters 400 >"$work/term.out" 2>"$work/term.err" &
bench_pid=$!
if wait_for "$work/term.out" 60 "^algo"; then
  run=$(name_in "$work/term.out")
  names+=("$run")
  sleep 0.3
  kill -TERM "$bench_pid"
fi
wait "$bench_pid"
rc=$?
bench_pid=
[[ $rc -eq 143 ]] || fail "bench --testbed on SIGTERM exited $rc, not 143: $(cat "$work/term.err")"
grep -q "stopped by SIGTERM" "$work/term.err" || fail "bench --testbed on SIGTERM said: $(cat "$work/term.err")"
[[ -n $run && -z $(left "$run") ]] || fail "after SIGTERM, left $(left "$run" | tr '\n' ' ')"
members_left "$work/term.out" && fail "after SIGTERM, member processes left"

# 6. The reader of bench --testbed's output goes away (`| head`): the next
# write raises SIGPIPE, which must stop the run like SIGTERM - the testbed
# and the members removed - not end the process and leave them behind.
timeout 120 "$bin" bench --testbed 3 --sizes 1M --iters 400 2>"$work/pipe.err" | head -n 5 >"$work/pipe.out"
rc=${PIPESTATUS[0]}
run=$(name_in "$work/pipe.out")
[[ -n $run ]] && names+=("$run")
[[ $rc -eq 141 ]] || fail "bench --testbed with its reader gone exited $rc, not 141: $(tail -3 "$work/pipe.err")"
grep -q "stopped by SIGPIPE" "$work/pipe.err" || fail "bench --testbed with its reader gone said: $(tail -3 "$work/pipe.err")"
[[ -n $run && -z $(left "$run") ]] || fail "after SIGPIPE, left $(left "$run" | tr '\n' ' ')"
members_left "$work/pipe.out" && fail "after SIGPIPE, member processes left"

echo "testbed: $fails failed"
[[ $fails -eq 0 ]]
