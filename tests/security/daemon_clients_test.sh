#!/usr/bin/env bash
# What `lanecast daemon` says about its clients, and what its clients learn
# about the daemon:
#   - names built to break the Prometheus text (quotes, backslashes, a
#     closing brace and a sample of their own) come out escaped: the file
#     parses (tests/security/exposition.py) with no sample but the daemon's,
#     and the name comes back as it was; a name with a line feed is refused
#     (bad_name, counted);
#   - records larger than the stream takes, written past the client library,
#     are refused and counted (lanecast_clients_publish_too_large);
#   - the UDP feed's datagrams, bytes and errors and each client's bytes are
#     exported;
#   - a daemon that stops (SIGSTOP) is noticed by a waiting subscriber through
#     its heartbeat; one killed with SIGKILL ends a waiting subscriber's and a
#     blocked publisher's waits (its socket hung up), each saying why.
#
# usage: daemon_clients_test.sh lanecast stream_publisher stream_subscriber hostile_client
set -u
bin=$(realpath "${1:?usage: daemon_clients_test.sh lanecast stream_publisher stream_subscriber hostile_client}")
pub=$(realpath "${2:?}")
sub=$(realpath "${3:?}")
hostile=$(realpath "${4:?}")
here=$(dirname "$(realpath "${BASH_SOURCE[0]}")")
# shellcheck source=tests/security/daemon_net.sh
source "$here/daemon_net.sh"
daemon_net_skip_unless_root
tag=lccl$$
daemon_net_up "$tag"
dir=/dev/shm/lanecast-$tag-r0
status=0
fail() { echo "FAIL: $*"; status=1; }
ok() { ((status == 0)) && echo "ok: $*"; }
prom=$work/r.prom

daemon_start "$dir" --prometheus "$prom" --udp-in 127.0.0.1:17201
daemon_wait "$dir"

# Names.
evil='x"} 1 fake 2 # \" \\ back\slash'
timeout 60 "$sub" --dir "$dir" --members 1 --ids 1 --count 1000 --timeout 50 --name "$evil" >"$work/evil-sub.out" 2>&1 &
evil_sub=$!
sleep 0.3
if timeout 20 "$pub" --dir "$dir" --id 1 --count 10 --name $'n} 1\nfake 2' >"$work/nl.out" 2>&1; then
  fail "a client named with a line feed was served"
else
  grep -q "refused (bad_name)" "$work/nl.out" || fail "a name with a line feed: $(cat "$work/nl.out")"
fi
timeout 30 "$pub" --dir "$dir" --id 1 --count 100 --name "$evil" >"$work/evil-pub.out" 2>&1 ||
  fail "the publisher named '$evil': $(cat "$work/evil-pub.out")"
sleep 0.5
if python3 "$here/exposition.py" "$prom" >"$work/samples" 2>"$work/parse.err"; then
  grep -q '^fake' "$work/samples" && fail "a sample named fake came through: $(grep '^fake' "$work/samples")"
  want=$(python3 -c 'import sys; print(repr(sys.argv[1]))' "$evil")
  grep -qF "lanecast_client_messages_out client='" "$work/samples" || fail "no client's samples in the Prometheus file"
  grep -F "lanecast_client_messages_out " "$work/samples" | grep -qF "name=$want" ||
    fail "the name did not come back as it was: $(grep -F lanecast_client_messages_out "$work/samples")"
  ok "the Prometheus file parses ($(wc -l <"$work/samples") samples), no injected sample, the name came back as given"
else
  fail "the Prometheus file does not parse: $(cat "$work/parse.err")"
fi
n=$(daemon_counter "$dir" 'lanecast_clients_refused_by_reason{reason="bad_name"}')
((n == 1)) || fail "refused for bad_name: counted $n, not 1"
"$bin" stat --dir "$dir" --once --filter client_messages_out | sed 's/^/  stat: /'
bytes_out=$(grep -F "lanecast_client_bytes_out{" "$prom" | grep -F 'name="x\"}' | awk '{ print $NF }')
((${bytes_out:-0} > 0)) || fail "no bytes_out for the subscriber: $(grep -F lanecast_client_bytes_out "$prom")"
kill "$evil_sub" 2>/dev/null
wait "$evil_sub" 2>/dev/null

# Records the stream cannot take.
timeout 30 "$hostile" --dir "$dir" --oversize 5 --ring 1048576 --name oversize >"$work/over.out" 2>&1 ||
  fail "oversize: $(cat "$work/over.out")"
sleep 0.3
too_large=$(daemon_counter "$dir" lanecast_clients_publish_too_large)
((too_large == 5)) || fail "the daemon counted $too_large records too large, not 5: $(cat "$work/over.out")"
ok "$(cat "$work/over.out" | sed 's/^hostile_client: //'); counted: $too_large"

# The UDP feed's counters.
ip netns exec "${tag}n0" python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for n in (10, 200, 3000):
    s.sendto(b"u" * n, ("127.0.0.1", 17201))'
sleep 0.5
for want in lanecast_udp_in_datagrams:3 lanecast_udp_in_bytes:3210 lanecast_udp_in_errors:0; do
  grep -q "^${want%:*}{group=\"$tag\",rank=\"0\"} ${want#*:}\$" "$prom" ||
    fail "${want%:*} is not ${want#*:}: $(grep "^${want%:*}" "$prom")"
done
ok "the UDP feed's datagrams, bytes and errors are exported"

# A daemon that stops: its heartbeat stands still.
timeout 60 "$sub" --dir "$dir" --count 1 --timeout 50 --silent-after 1000 --name waiting >"$work/silent.out" 2>&1 &
waiting=$!
sleep 0.5
ip netns pids "${tag}n0" | xargs -r kill -STOP
for ((t = 0; t < 200; t++)); do kill -0 "$waiting" 2>/dev/null || break; sleep 0.1; done
ip netns pids "${tag}n0" | xargs -r kill -CONT
if kill -0 "$waiting" 2>/dev/null; then
  fail "a subscriber of a stopped daemon still waits after 20 s"
  kill "$waiting"
fi
wait "$waiting" 2>/dev/null
grep -q "heartbeat stands still" "$work/silent.out" || fail "stopped daemon: $(cat "$work/silent.out")"
ok "a stopped daemon: $(cat "$work/silent.out")"

# A daemon killed under a waiting subscriber and a publisher with a full ring.
timeout 120 "$sub" --dir "$dir" --count 1000000 --timeout 100 --name orphan-sub >"$work/orphan-sub.out" 2>&1 &
orphan_sub=$!
sleep 0.3  # subscribed before the first message
timeout 120 "$pub" --dir "$dir" --id 7 --count 100000000 --size 1000 --ring 65536 --name orphan-pub \
  >"$work/orphan-pub.out" 2>&1 &
orphan_pub=$!
sleep 1
daemon_kill9 "$dir"
for p in $orphan_sub $orphan_pub; do
  for ((t = 0; t < 200; t++)); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$p" 2>/dev/null && { fail "a client of a killed daemon still waits after 20 s"; kill "$p"; }
done
wait "$orphan_sub" 2>/dev/null
wait "$orphan_pub" 2>/dev/null
for f in orphan-sub orphan-pub; do
  grep -q "the daemon is gone" "$work/$f.out" || fail "$f: $(cat "$work/$f.out")"
done
ok "a killed daemon: $(cat "$work/orphan-sub.out"); $(cat "$work/orphan-pub.out")"
exit $status
