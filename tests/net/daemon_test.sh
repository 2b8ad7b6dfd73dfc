#!/usr/bin/env bash
# `lanecast daemon` on a bridge, one daemon per namespace (3 members), each
# serving local applications that link only the client library:
#  1. per member two publishers (examples/stream_publisher) and three
#     subscribers (examples/stream_subscriber): every subscriber of every
#     member gets every message of every publisher of every member, in
#     order and intact;
#  2. meanwhile a third publisher and a fourth subscriber on member 0 are
#     killed with SIGKILL: the daemons and every other client go on, the
#     daemon drops both (counted); clients' memory is in memfds, so the
#     directory never holds more than control.sock and stats;
#  3. `lanecast stat --once` and the Prometheus file show the counters;
#     /metrics answers over HTTP;
#     the Grafana dashboard (config/grafana/) asks only for metrics and
#     labels the daemons export;
#  4. a UDP feed: datagrams sent to member 1's --udp-in reach member 2's
#     --udp-out socket, in order;
#  5. SIGTERM: every daemon exits, its socket and stats file removed; the
#     capture of member 2's --record holds everything it delivered.
# Everything this test creates is removed on any exit.
#
# usage: daemon_test.sh path/to/lanecast path/to/stream_publisher path/to/stream_subscriber
set -u
bin=$(realpath "${1:?usage: daemon_test.sh lanecast stream_publisher stream_subscriber}")
pub=$(realpath "${2:?}")
sub=$(realpath "${3:?}")
dashboard=$(realpath "$(dirname "${BASH_SOURCE[0]}")/../../config/grafana/lanecast-daemon.json")
if [[ $(id -u) -ne 0 ]] || ! command -v ip >/dev/null; then
  echo "SKIP: needs root and iproute2 to create namespaces, a bridge and veths"
  exit 77
fi
nodes=3 count=20000
tag=lcdm$$
# shellcheck source=tests/net/member_net.sh
source "$(dirname "${BASH_SOURCE[0]}")/member_net.sh"
member_net_test "$tag" "$nodes" 10.79.0
dirs=()
for ((i = 0; i < nodes; i++)); do dirs+=("/dev/shm/lanecast-$tag-r$i"); done
trap 'member_net_test_cleanup; rm -rf "${dirs[@]}"' EXIT
status=0
fail() { echo "FAIL: $*"; status=1; }

write_member_group discovery "$work/group.toml" "$tag" 44 20000 64K "$nodes"
sed -i 's/^peer_timeout_ms = .*/peer_timeout_ms = 5000/' "$work/group.toml"
for ((i = 0; i < nodes; i++)); do
  extra=()
  ((i == 0)) && extra=(--prometheus "$work/r0.prom" --metrics-port 19393)
  ((i == 1)) && extra=(--udp-in 10.79.0.2:17001 --udp-in-from 10.79.0.2)
  ((i == 2)) && extra=(--udp-out 10.79.0.3:17002 --record "$work/daemon2.pcap")
  ip netns exec "${tag}n$i" timeout 300 "$bin" daemon --config "$work/group.toml" --rank "$i" --dir "${dirs[i]}" \
    --yield-when-idle --stats-interval 200 "${extra[@]}" >"$work/daemon$i.out" 2>&1 &
  pids+=($!)
  daemons[i]=$!
done
for ((i = 0; i < nodes; i++)); do
  for ((t = 0; t < 600; t++)); do [[ -S ${dirs[i]}/control.sock ]] && break; sleep 0.1; done
  [[ -S ${dirs[i]}/control.sock ]] || { fail "daemon $i never listened"; cat "$work/daemon$i.out"; exit 1; }
done
echo "ok: $nodes daemons formed the group and listen"

# 4 first, on a quiet stream: 200 datagrams into member 1's feed, out of member 2's sink.
ip netns exec "${tag}n2" timeout 60 python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.79.0.3", 17002)); s.settimeout(30)
got = [s.recv(2048) for _ in range(200)]
bad = [i for i, d in enumerate(got) if d != b"feed %06d " % i + b"x" * (i % 300)]
print("udp sink: 200 datagrams, out of order or wrong:", len(bad)); sys.exit(1 if bad else 0)
' >"$work/sink.out" 2>&1 &
sink=$!
sleep 0.5
ip netns exec "${tag}n1" python3 -c '
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(200):
    s.sendto(b"feed %06d " % i + b"x" * (i % 300), ("10.79.0.2", 17001)); time.sleep(0.001)
'
if wait "$sink"; then echo "ok: $(cat "$work/sink.out")"; else fail "udp feed: $(cat "$work/sink.out")"; fi

# 1 and 2: two publishers and three subscribers per member; victims on member 0.
clients=()
for ((i = 0; i < nodes; i++)); do
  for s in 1 2 3; do
    timeout 300 "$sub" --dir "${dirs[i]}" --members "$nodes" --ids 1,2 --count "$count" --timeout 240 \
      --name "sub$i.$s" >"$work/sub$i.$s.out" 2>&1 &
    clients+=($!)
  done
done
# The victims run without a timeout wrapper: SIGKILL must reach them, not a wrapper.
"$sub" --dir "${dirs[0]}" --members "$nodes" --ids 1,2 --count "$count" --timeout 240 --name victim \
  >"$work/victim_sub.out" 2>&1 &
victim_sub=$!
pids+=($victim_sub)
sleep 1
"$pub" --dir "${dirs[0]}" --id 9 --count 100000000 --size 200 --rate 20000 >"$work/victim_pub.out" 2>&1 &
victim_pub=$!
pids+=($victim_pub)
for ((i = 0; i < nodes; i++)); do
  for id in 1 2; do
    timeout 300 "$pub" --dir "${dirs[i]}" --id "$id" --count "$count" --size $((64 + 100 * id)) \
      >"$work/pub$i.$id.out" 2>&1 &
    clients+=($!)
  done
done
sleep 2
# With every kind of client connected: each member's counters, for the
# dashboard's check below.
for ((i = 0; i < nodes; i++)); do
  "$bin" stat --dir "${dirs[i]}" --once --all --json >"$work/live$i.json" 2>&1 || fail "stat --json: $(cat "$work/live$i.json")"
done
entries=$(ls -A "${dirs[0]}" | tr '\n' ' ')
[[ $entries == "control.sock stats " ]] || fail "member 0's directory holds $entries with clients connected"
kill -9 "$victim_pub" "$victim_sub"
wait "$victim_pub" "$victim_sub" 2>/dev/null
echo "ok: killed a publisher and a subscriber of member 0 with SIGKILL"
bad=0
for p in "${clients[@]}"; do wait "$p" || bad=$((bad + 1)); done
if ((bad == 0)); then
  echo "ok: 9 subscribers got $count messages from each of 6 publishers, in order and intact"
else
  fail "$bad of ${#clients[@]} clients failed"
  for f in "$work"/sub*.out "$work"/pub*.out; do sed "s|^|  $(basename "$f"): |" "$f"; done
fi
for ((i = 0; i < nodes; i++)); do
  kill -0 "${daemons[i]}" 2>/dev/null || fail "daemon $i is gone: $(tail -3 "$work/daemon$i.out")"
done
sleep 0.5

# 3: the counters from outside.
"$bin" stat --dir "${dirs[0]}" --once >"$work/stat.out" 2>&1 || fail "stat: $(cat "$work/stat.out")"
for want in lanecast_stream_delivered_messages lanecast_clients_disconnected lanecast_peer_tx_data lanecast_poll_long_cycles; do
  grep -q "^$want" "$work/stat.out" || fail "stat shows no $want"
done
disconnected=$(awk '$1 == "lanecast_clients_disconnected" { print $2 }' "$work/stat.out")
((disconnected >= 2)) || fail "member 0 counted $disconnected clients gone, not the two killed and the others"
sleep 0.5
grep -q '^lanecast_stream_delivered_messages{group="'"$tag"'",rank="0",publisher="1",stream="0"} ' "$work/r0.prom" ||
  fail "the Prometheus file has no stream counter: $(head -5 "$work/r0.prom")"
ip netns exec "${tag}n0" timeout 10 python3 -c '
import urllib.request
t = urllib.request.urlopen("http://127.0.0.1:19393/metrics", timeout=5).read().decode()
assert "lanecast_clients_connected" in t, t[:200]
print("metrics:", len(t.splitlines()), "lines")' >"$work/http.out" 2>&1 || fail "/metrics: $(cat "$work/http.out")"
echo "ok: stat, the Prometheus file and /metrics show the counters ($(grep -c . "$work/stat.out") lines from stat)"
sed 's/^/  /' "$work/stat.out"
grep -E '^lanecast_(stream_slowest|clients_evicted|peer_tx_retransmits)' "$work/r0.prom" | sed 's/^/  prom: /'

# The Grafana dashboard (config/grafana/) asks only for metrics these daemons
# export - members, peers, streams, clients, both UDP feeds - and only for
# labels they carry.
if python3 - "$dashboard" "$work"/live*.json "$work/r0.prom" >"$work/dashboard.out" 2>&1 <<'PY'
import json, re, sys
dash = json.load(open(sys.argv[1]))
seen = {}  # metric -> its label names
for path in sys.argv[2:]:
    lines = open(path).read().splitlines()
    names = [n for l in lines if l.startswith("{") for n in json.loads(l)["counters"]] if path.endswith(".json") else \
            [l.split(" ")[0] for l in lines if l and not l.startswith("#")]
    for n in names:
        m = re.match(r"([a-z_0-9]+)(?:\{(.*)\})?$", n)
        seen.setdefault(m.group(1), set()).update(re.findall(r"([a-z_]+)=", m.group(2) or "") + ["group", "rank"])
exprs = [t["expr"] for p in dash["panels"] for t in p.get("targets", [])]
exprs += [v["query"]["query"] for v in dash["templating"]["list"] if isinstance(v.get("query"), dict)]
missing, bad_labels = set(), set()
for e in exprs:
    for metric in re.findall(r"\b(lanecast_[a-z_0-9]+)\b", e):
        if metric not in seen:
            missing.add(metric)
    for by in re.findall(r"by \(([^)]*)\)", e):
        metric = re.findall(r"\b(lanecast_[a-z_0-9]+)\b", e)[0]
        for label in (x.strip() for x in by.split(",")):
            if metric in seen and label not in seen[metric]:
                bad_labels.add(metric + ":" + label)
print("dashboard: %d queries over %d metrics; missing %s; labels not carried %s" %
      (len(exprs), len({m for e in exprs for m in re.findall(r"lanecast_[a-z_0-9]+", e)}), sorted(missing) or "none",
       sorted(bad_labels) or "none"))
sys.exit(1 if missing or bad_labels else 0)
PY
then
  echo "ok: $(cat "$work/dashboard.out")"
else
  fail "$(cat "$work/dashboard.out")"
fi

# 5: SIGTERM.
for ((i = 0; i < nodes; i++)); do kill -TERM "${daemons[i]}"; done
for ((i = 0; i < nodes; i++)); do
  wait "${daemons[i]}"
  rc=$?
  # The first daemon to stop leaves; the others may see it go (exit 1, said) before their own signal.
  ((rc == 0 || rc == 1)) || fail "daemon $i exited $rc: $(tail -3 "$work/daemon$i.out")"
  [[ -e ${dirs[i]}/control.sock || -e ${dirs[i]}/stats ]] && fail "daemon $i left $(ls -A "${dirs[i]}")"
done
echo "ok: SIGTERM stopped every daemon, sockets and stats files removed"
# daemon --record: member 2 wrote every message it delivered.
if command -v tcpdump >/dev/null; then
  recorded=$(tcpdump -r "$work/daemon2.pcap" 2>/dev/null | wc -l)
  ((recorded >= 6 * count + 200)) && echo "ok: daemon --record: tcpdump reads $recorded messages from member 2's capture" ||
    fail "daemon --record: $recorded messages in member 2's capture, at least $((6 * count + 200)) delivered"
fi
grep -h "stopping" "$work"/daemon*.out
exit $status
