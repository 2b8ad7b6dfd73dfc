#!/usr/bin/env bash
# Every --json parses, whatever strings reach it: a path, a group's name or a
# client's name holding double quotes, backslashes, control characters and
# bytes that are not UTF-8. Each command runs on such input and a strict JSON
# parser (python3's json, which refuses raw control characters) reads what it
# printed on stdout; the hostile string must come back as written (a byte
# that is not UTF-8 as U+FFFD). As any user: plan (topology and rules files),
# replay in process (the capture), bench in process and its stream mode. As
# root, in a network namespace of its own on a veth: a one-member group named
# with the string for record (the output file), replay as a member, and the
# daemon with a client of that name, read by `lanecast stat --json`.
#
# usage: json_test.sh lanecast stream_publisher make_pcapng.py
set -u
bin=$(realpath "${1:?usage: json_test.sh lanecast stream_publisher make_pcapng.py}")
publisher=$(realpath "${2:?}")
make_pcap=$(realpath "${3:?}")
tmp=$(mktemp -d)
cleanup() { if [[ -n ${KEEP:-} ]]; then echo "kept $tmp"; else rm -rf "$tmp"; fi; }
trap cleanup EXIT INT TERM
fails=0
pass=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# Double quote, backslash, control characters (SOH, unit separator, tab) and
# 0xff, which no UTF-8 text holds.
weird=$'we"ird\\na\x01me\x1f\t\xff'
# The same for a TOML basic string (a group's name; TOML holds only UTF-8).
weird_toml='we\"ird\\na\u0001me\u001f\t'
weird_utf8=$'we"ird\\na\x01me\x1f\t'
# A client's name the daemon takes (printable ASCII) with a quote and a backslash.
client='c"l\i'

# parsed WHAT PYTHON_EXPR: stdin must parse as JSON (d), or JSON Lines with
# --lines (d: the list of objects); PYTHON_EXPR must be true. `want` is the
# hostile string as the output must hold it (argument 3, bytes in UTF-8 with
# errors replaced).
parsed() {
  local what=$1 expr=$2 want=${3:-}
  local out
  if out=$(python3 -c '
import json, sys
what, expr, want, lines = sys.argv[1], sys.argv[2], sys.argv[3].encode("utf-8", "surrogateescape").decode("utf-8", "replace"), sys.argv[4] == "1"
text = sys.stdin.buffer.read().decode("utf-8")  # the output itself must be UTF-8
d = [json.loads(l) for l in text.splitlines() if l.strip()] if lines else json.loads(text)
if not eval(expr):
    print("%s: %s is false; output: %s" % (what, expr, text[:600]))
    sys.exit(1)
' "$what" "$expr" "$want" "${LINES_MODE:-0}" 2>&1); then
    pass=$((pass + 1))
  else
    fail "$what: $out"
  fi
}

# plan: the topology and auto-rules files' paths are in its objects.
topo="$tmp/$weird.topo"
printf 'nodes 4\ndefault 10us\n' >"$topo"
rules="$tmp/$weird.rules"
cp "$(dirname "$(realpath "$0")")/../../config/auto.rules" "$rules"
timeout 60 "$bin" plan --algo chain --nodes 4 --size 1K --topology "$topo" --json >"$tmp/out" 2>"$tmp/err"
parsed "plan --topology" 'd[0]["topology"] == want and d[0]["complete"]' "$topo" <"$tmp/out"
timeout 60 "$bin" plan --algo auto --nodes 4 --size 1K --auto-rules "$rules" --json >"$tmp/out" 2>"$tmp/err"
parsed "plan --auto-rules" 'want in d[0]["rule_at"]' "$rules" <"$tmp/out"
# plan --stream: no strings from the user, but the same JSON array.
timeout 60 "$bin" plan --stream --nodes 4,8 --size 64 --messages 1000 --json >"$tmp/out" 2>"$tmp/err"
parsed "plan --stream" 'len(d) == 2 and d[1]["nodes"] == 8 and d[0]["offered_msgs_per_s"] is None and d[0]["msgs_per_s"] > 0' <"$tmp/out"

# replay in process: the capture's path.
pcap="$tmp/$weird.pcapng"
python3 "$make_pcap" "$pcap" --packets 40 --gap-us 100 >/dev/null || fail "make_pcapng.py"
timeout 60 "$bin" replay --pcap "$pcap" --nodes 2 --verify --json >"$tmp/out" 2>"$tmp/err"
parsed "replay" 'd["pcap"] == want and d["verified"] and isinstance(d["send_error_histogram_us"], list)' "$pcap" <"$tmp/out"

# bench, in process and streams: every object parses.
timeout 120 "$bin" bench --nodes 3 --algo chain,circulant --sizes 1K,64K --iters 2 --json >"$tmp/out" 2>"$tmp/err"
parsed "bench" 'len(d) == 4 and all(r["verified"] for r in d)' <"$tmp/out"
timeout 120 "$bin" bench --nodes 3 --stream --sizes 64 --messages 2000 --json >"$tmp/out" 2>"$tmp/err"
parsed "bench --stream" 'len(d) == 1 and d[0]["verified"] and len(d[0]["histogram_us"]) > 0' <"$tmp/out"

if [[ $(id -u) -ne 0 ]] || ! command -v unshare >/dev/null; then
  echo "json: $pass passed, $fails failed; as root the member commands and the daemon also run"
  ((fails == 0))
  exit
fi

# As root, in a network namespace of this test's own: one member on a veth.
cat >"$tmp/group.toml" <<EOF
[group]
name = "$weird_toml"
bootstrap = "static"
epoch = 1

[[member]]
rank = 0
lanes = ["net_af_packet0,iface=lcj0"]
macs = ["02:00:00:00:00:01"]
EOF
# in_netns COMMAND...: the command (at most 60 s) in a new network namespace
# with the member's veth up; gone with the command.
in_netns() {
  timeout 60 unshare -n bash -c 'ip link add lcj0 type veth peer name lcj1 && ip link set lcj1 up &&
    ip link set lcj0 address 02:00:00:00:00:01 up && exec "$@"' _ "$@"
}
out="$tmp/$weird.out.pcap"
in_netns "$bin" record --config "$tmp/group.toml" --rank 0 --out "$out" --duration 1 --json >"$tmp/out" 2>"$tmp/err"
parsed "record" 'd["out"] == want and d["ok"]' "$out" <"$tmp/out"
in_netns "$bin" replay --pcap "$pcap" --config "$tmp/group.toml" --rank 0 --json >"$tmp/out" 2>"$tmp/err"
parsed "replay as a member" 'd["messages_delivered"] == d["messages"] and d["rank"] == 0' "$pcap" <"$tmp/out"

# The daemon of a group with that name, a client of that name; stat reads both.
dir="$tmp/daemon"
# shellcheck disable=SC2016
in_netns bash -c '"$1" daemon --config "$2" --rank 0 --dir "$3" --stats-interval 100 >"$4/daemon.log" 2>&1 &
  daemon=$!
  for _ in $(seq 100); do [[ -S $3/control.sock ]] && break; sleep 0.1; done
  "$5" --dir "$3" --id 1 --count 50 --name "$6" >"$4/refused.log" 2>&1
  "$5" --dir "$3" --id 2 --count 300 --rate 200 --name "$7" >"$4/publisher.log" 2>&1 &
  publisher=$!
  sleep 0.7  # the client connected and counted (stats every 100 ms), still publishing
  "$1" stat --dir "$3" --once --all --json >"$4/stat.json" 2>"$4/stat.err"
  wait $publisher
  kill $daemon; wait $daemon' _ "$bin" "$tmp/group.toml" "$dir" "$tmp" "$publisher" "$weird" "$client"
LINES_MODE=1 parsed "stat --json: the group" 'd[0]["group"] == want' "$weird_utf8" <"$tmp/stat.json"
# The daemon takes only printable ASCII names: the control characters are
# refused (counted by reason); quotes and a backslash go into a label,
# escaped as Prometheus' format says, and that text into the JSON key.
LINES_MODE=1 parsed "stat --json: the client" \
  'any(want in k for k in d[0]["counters"]) and d[0]["counters"]["lanecast_clients_refused_by_reason{reason=\"bad_name\"}"] == 1' \
  'name="c\"l\\i"' <"$tmp/stat.json"
if ! grep -q . "$tmp/stat.json"; then
  echo "    daemon: $(tail -3 "$tmp/daemon.log")"
  echo "    publisher: $(tail -3 "$tmp/publisher.log")"
  echo "    stat: $(cat "$tmp/stat.err")"
fi

echo "json: $pass passed, $fails failed"
((fails == 0))
