#!/usr/bin/env bash
# /metrics under idle connections (docs/security.md, "/metrics"): an
# attacker holds 300 TCP connections to the daemon's --metrics-port that
# never send a request, reopening each one the daemon closes. Three scrapes
# meanwhile each get the counters within their own bounded wait (5 s), and
# the daemon counts the connections it closed unanswered.
#
# usage: metrics_idle_test.sh lanecast
set -u
bin=$(realpath "${1:?usage: metrics_idle_test.sh lanecast}")
here=$(dirname "$(realpath "${BASH_SOURCE[0]}")")
# shellcheck source=tests/security/daemon_net.sh
source "$here/daemon_net.sh"
daemon_net_skip_unless_root
tag=lcmi$$
daemon_net_up "$tag"
dir=/dev/shm/lanecast-$tag-r0
port=19391
status=0
fail() { echo "FAIL: $*"; status=1; }
in_ns() { ip netns exec "${tag}n0" "$@"; }

daemon_start "$dir" --metrics-port "$port"
daemon_wait "$dir"
in_ns timeout 60 python3 "$here/idle_connections.py" 127.0.0.1 "$port" 300 6 >"$work/idle.out" 2>&1 &
idle=$!
for ((t = 0; t < 100; t++)); do grep -q open "$work/idle.out" && break; sleep 0.05; done
for i in 1 2 3; do
  if in_ns python3 -c '
import sys, urllib.request
with urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=5) as r:
    body = r.read().decode()
sys.exit(0 if "lanecast_publisher_published_messages" in body else 1)' "$port" 2>"$work/scrape$i.err"; then
    echo "ok: scrape $i answered beside 300 idle connections"
  else
    fail "scrape $i beside 300 idle connections: $(tail -1 "$work/scrape$i.err")"
  fi
  sleep 0.5
done
wait "$idle"
dropped=$(daemon_counter "$dir" lanecast_metrics_connections_dropped)
((dropped >= 300)) || fail "the daemon counts $dropped connections closed unanswered"
echo "ok: $(tail -1 "$work/idle.out"); the daemon closed $dropped unanswered," \
  "answered $(daemon_counter "$dir" lanecast_metrics_scrapes)"
daemon_stop
exit $status
