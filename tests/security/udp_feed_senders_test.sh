#!/usr/bin/env bash
# The UDP feed as a trust boundary (docs/security.md, "The UDP feed"): the
# daemon's --udp-in listens on every address of its namespace and takes
# datagrams from 127.0.0.1:17399 only (--udp-in-from). Strangers send: from
# the right address and another port, and from the namespace's own veth
# address. None of theirs is published - the stream's count is exactly the
# sender's - and each is counted under its reason (sender_port,
# sender_address).
#
# usage: udp_feed_senders_test.sh lanecast
set -u
bin=$(realpath "${1:?usage: udp_feed_senders_test.sh lanecast}")
here=$(dirname "$(realpath "${BASH_SOURCE[0]}")")
# shellcheck source=tests/security/daemon_net.sh
source "$here/daemon_net.sh"
daemon_net_skip_unless_root
tag=lcuf$$
daemon_net_up "$tag"
dir=/dev/shm/lanecast-$tag-r0
status=0
fail() { echo "FAIL: $*"; status=1; }
# send FROM_ADDR FROM_PORT COUNT: datagrams to the feed from that source
send() {
  ip netns exec "${tag}n0" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
for i in range(int(sys.argv[3])):
    s.sendto(b"datagram %d from %s" % (i, sys.argv[1].encode()), (sys.argv[1], 17301))' "$@"
}
# until COUNTER equals VALUE (20 s at most); prints the last value
counter_becomes() {
  local t v
  for ((t = 0; t < 200; t++)); do
    v=$(daemon_counter "$dir" "$1")
    [[ $v == "$2" ]] && break
    sleep 0.1
  done
  echo "$v"
}

daemon_start "$dir" --udp-in 0.0.0.0:17301 --udp-in-from 127.0.0.1:17399
daemon_wait "$dir"
grep -q "the UDP feed takes datagrams from 127.0.0.1:17399 only" "$work/daemon.out" ||
  fail "the daemon does not say whom its feed takes: $(head -3 "$work/daemon.out")"
veth=$(ip netns exec "${tag}n0" ip -4 -o addr show v0 | awk '{ sub("/.*", "", $4); print $4 }')
send 127.0.0.1 17398 5
send "$veth" 17399 7
send 127.0.0.1 17399 3
[[ $(counter_becomes 'lanecast_udp_in_refused{reason="sender_port"}' 5) == 5 ]] ||
  fail "from another port: $(daemon_counter "$dir" 'lanecast_udp_in_refused{reason="sender_port"}') counted, not 5"
[[ $(counter_becomes 'lanecast_udp_in_refused{reason="sender_address"}' 7) == 7 ]] ||
  fail "from $veth: $(daemon_counter "$dir" 'lanecast_udp_in_refused{reason="sender_address"}') counted, not 7"
[[ $(counter_becomes lanecast_udp_in_datagrams 3) == 3 ]] ||
  fail "the sender's datagrams: $(daemon_counter "$dir" lanecast_udp_in_datagrams) published, not 3"
published=$(daemon_counter "$dir" lanecast_publisher_published_messages)
((published == 3)) || fail "the stream took $published messages; only the sender's 3 may be on it"
((status == 0)) && echo "ok: of 15 datagrams the stream took the configured sender's 3; 5 from another port" \
  "and 7 from $veth were dropped and counted by reason"
daemon_stop
exit $status
