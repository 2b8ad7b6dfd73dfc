#!/usr/bin/env bash
# lanecast replay and record, end to end, with captures made outside lanecast:
#  1. tcpdump captures a stream of UDP datagrams (python sends them) between
#     two namespaces on a bridge: a pcap with microsecond time stamps;
#  2. tests/replay/make_pcapng.py builds a pcapng with nanosecond time stamps
#     (every tenth packet ARP, to be skipped);
#  3. each is replayed to 8 members at --topspeed and at --speed 1 with
#     --verify and --record: every member's recorded pcap holds the source's
#     UDP payloads in order, byte for byte (tests/replay/compare_pcaps.py,
#     its own pcap reader), and tcpdump reads the recorded files;
#  4. --loop 2 --pps, --mbps, a BPF --filter, --whole-frame with raw
#     records, `lanecast record` as a member of a group of processes, and
#     replay --testbed (a member process per namespace);
#  5. bad files: a clear error and exit status, never a crash;
#  6. memory: a capture ten times the size, replayed twice with --verify
#     and --record, takes no more memory than the first one beyond the
#     read-ahead ring (the file is streamed, never held).
# Timing figures are printed, never asserted (the machine is shared).
#
# usage: replay_test.sh path/to/lanecast
set -u
bin=$(realpath "${1:?usage: replay_test.sh path/to/lanecast}")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tools=$here/../replay
if [[ $(id -u) -ne 0 ]] || ! command -v ip >/dev/null || ! command -v tcpdump >/dev/null; then
  echo "SKIP: needs root, iproute2 and tcpdump (apt-get install tcpdump)"
  exit 77
fi
tag=lcrp$$
# shellcheck source=tests/net/member_net.sh
source "$here/member_net.sh"
member_net_test "$tag" 3 10.81.0
status=0
fail() { echo "FAIL: $*"; status=1; }
check() {  # WHAT COMMAND...: runs it, fails the test on a non-zero status
  local what=$1
  shift
  if ! out=$("$@" 2>&1); then fail "$what: $out"; return 1; fi
  return 0
}

# 1. A tcpdump capture of 3000 datagrams of 0..1400 bytes, 100 us apart.
ip netns exec "${tag}n1" timeout 60 tcpdump -i v0 -U -B 16384 -w "$work/tcpdump.pcap" -s 0 udp port 6000 2>"$work/tcpdump.err" &
capture=$!
pids+=($capture)
for ((t = 0; t < 50; t++)); do grep -q "listening on" "$work/tcpdump.err" 2>/dev/null && break; sleep 0.1; done
ip netns exec "${tag}n0" python3 -c '
import socket, time, random
r = random.Random(3)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
t = time.monotonic()
for i in range(3000):
    n = r.choice([0, 16, 64, 300, 1000, 1400])
    s.sendto((b"%08d" % i + bytes(r.randrange(256) for _ in range(n)))[:max(n, 8)], ("10.81.0.2", 6000))
    t += 100e-6
    while time.monotonic() < t: pass
'
sleep 0.5
kill -INT "$capture"
wait "$capture" 2>/dev/null
packets=$(tcpdump -r "$work/tcpdump.pcap" 2>/dev/null | wc -l)
# What tcpdump keeps is its business (it may drop under load); replay must deliver what it kept.
((packets >= 2000)) || fail "tcpdump captured $packets of 3000 datagrams: $(cat "$work/tcpdump.err")"
echo "ok: tcpdump captured $packets of 3000 datagrams ($(stat -c %s "$work/tcpdump.pcap") bytes; $(grep -o '[0-9]* packets dropped by kernel' "$work/tcpdump.err"))"

# 2. pcapng, nanosecond time stamps.
python3 "$tools/make_pcapng.py" "$work/built.pcapng" --packets 3000 --gap-us 150 || fail "make_pcapng.py"
echo "ok: built a pcapng of 3000 packets (2700 UDP), 150 us apart, nanosecond time stamps"

# 3. Both files, 8 members, at top speed and at the capture's speed.
for f in tcpdump.pcap built.pcapng; do
  for mode in "--topspeed" "--speed 1"; do
    dir=$work/rec-${f%%.*}-${mode//[- ]/}
    # shellcheck disable=SC2086
    if check "replay $f $mode" "$bin" replay --pcap "$work/$f" --nodes 8 $mode --verify --record "$dir" --json; then
      echo "ok: replay $f $mode: $out"
      grep -qE '"verified": ?true' <<<"$out" || fail "replay $f $mode did not verify"
      check "compare $f $mode" python3 "$tools/compare_pcaps.py" "$work/$f" "$dir"/member-*.pcap &&
        echo "ok:   $(grep -c 'equal to the source' <<<"$out") of 8 recorded files equal the source's payloads, in order"
    fi
  done
done
check "tcpdump reads a recorded file" tcpdump -r "$work/rec-built-speed1/member-5.pcap" -c 1 --time-stamp-precision nano &&
  echo "ok: tcpdump reads the records: $(tail -1 <<<"$out")"

# 4. Loops, rates, a filter, whole frames, and record as a member process.
check "--loop 2 --pps" "$bin" replay --pcap "$work/built.pcapng" --nodes 4 --loop 2 --pps 40000 --verify \
  --record "$work/rec-loop" --json && grep -qE '"messages_delivered_min": ?5400' <<<"$out" &&
  check "compare loops" python3 "$tools/compare_pcaps.py" "$work/built.pcapng" "$work/rec-loop/member-3.pcap" --loops 2 &&
  echo "ok: --loop 2 --pps 40000: 5400 messages per member, the file twice over"
check "--mbps" "$bin" replay --pcap "$work/tcpdump.pcap" --nodes 3 --mbps 50 --verify --json &&
  grep -qE '"verified": ?true' <<<"$out" && echo "ok: --mbps 50: $(grep -oE '"seconds": ?[0-9.]*' <<<"$out")"
check "--filter" "$bin" replay --pcap "$work/built.pcapng" --nodes 3 --topspeed --filter "udp and greater 600" --verify --json
want=$(tcpdump -r "$work/built.pcapng" "udp and greater 600" 2>/dev/null | wc -l)
grep -qE "\"packets\": ?$want," <<<"$out" && echo "ok: --filter 'udp and greater 600': $want packets, as tcpdump counts" ||
  fail "--filter: tcpdump counts $want, replay said $out"
check "--whole-frame" "$bin" replay --pcap "$work/built.pcapng" --nodes 3 --topspeed --whole-frame --verify \
  --record "$work/rec-raw" --json &&
  check "compare frames" python3 "$tools/compare_pcaps.py" "$work/built.pcapng" "$work/rec-raw/member-2.pcap" --whole-frame &&
  echo "ok: --whole-frame: every frame (ARP too) delivered and recorded as captured"

# `lanecast record` beside `replay --config`: three member processes, one namespace each.
write_member_group discovery "$work/group.toml" "$tag" 45 20000 1M 3
for i in 1 2; do
  ip netns exec "${tag}n$i" timeout 120 "$bin" record --config "$work/group.toml" --rank "$i" \
    --out "$work/member$i.pcap" --count 2700 >"$work/record$i.out" 2>&1 &
  pids+=($!)
  rec[i]=$!
done
ip netns exec "${tag}n0" timeout 120 "$bin" replay --pcap "$work/built.pcapng" --config "$work/group.toml" --rank 0 \
  --speed 4 --verify >"$work/replay0.out" 2>&1 || fail "replay --config: $(cat "$work/replay0.out")"
for i in 1 2; do wait "${rec[i]}" || fail "record $i: $(cat "$work/record$i.out")"; done
check "compare member records" python3 "$tools/compare_pcaps.py" "$work/built.pcapng" "$work/member1.pcap" "$work/member2.pcap" &&
  echo "ok: replay --config and record on 3 member processes: $(head -1 "$work/replay0.out")"

# replay --testbed: a member process per namespace of a testbed of its own.
check "replay --testbed" "$bin" replay --pcap "$work/tcpdump.pcap" --testbed 4 --speed 2 --loop 2 --verify \
  --record "$work/rec-tb" &&
  check "compare testbed records" python3 "$tools/compare_pcaps.py" "$work/tcpdump.pcap" "$work/rec-tb"/member-*.pcap \
    --loops 2 &&
  echo "ok: replay --testbed 4 --loop 2: every member process verified and recorded the capture's payloads twice, in order"

# 5. Bad files.
head -c 5000 /dev/urandom >"$work/noise.pcap"
out=$("$bin" replay --pcap "$work/noise.pcap" --nodes 2 2>&1)
rc=$?
((rc == 3)) && grep -q "noise.pcap" <<<"$out" && echo "ok: a file of noise: exit 3, $out" || fail "noise: exit $rc: $out"
head -c 3000 "$work/tcpdump.pcap" >"$work/cut.pcap"
out=$("$bin" replay --pcap "$work/cut.pcap" --nodes 2 --topspeed --verify 2>&1)
rc=$?
((rc == 0 || rc == 3)) && echo "ok: a file cut short: exit $rc ($(tail -1 <<<"$out"))" || fail "cut file: exit $rc: $out"
out=$("$bin" replay --pcap "$work/built.pcapng" --nodes 2 --filter "tcp" 2>&1)
rc=$?
((rc == 3)) && grep -q "no packet to replay" <<<"$out" && echo "ok: a filter that leaves nothing: exit 3" || fail "empty: $rc $out"
out=$("$bin" replay --pcap "$work/built.pcapng" --nodes 2 --filter "bogus syntax (" 2>&1)
rc=$?
((rc == 3)) && grep -q "filter" <<<"$out" && echo "ok: a bad filter: exit 3, said" || fail "bad filter: $rc $out"

# 6. Memory: the peak RSS of a replay of a capture ten times the size, twice
# over, within the read-ahead ring of the first one's (and 32 MiB of slack,
# for ASan's quarantine).
rss() { grep -oE '"peak_rss_mib": ?[0-9.]*' <<<"$1" | awk -F: '{ print int($2 + 0.5) }'; }
python3 "$tools/make_pcapng.py" "$work/big.pcapng" --packets 30000 --gap-us 150 || fail "make_pcapng.py big"
if check "replay small" "$bin" replay --pcap "$work/built.pcapng" --nodes 8 --topspeed --verify --record "$work/rec-small" --json; then
  small=$(rss "$out")
  if check "replay 10x, twice" "$bin" replay --pcap "$work/big.pcapng" --nodes 8 --topspeed --loop 2 --verify \
    --record "$work/rec-big" --json; then
    big=$(rss "$out")
    ring=$(($(grep -oE '"read_ahead_bytes": ?[0-9]*' <<<"$out" | awk -F: '{ print $2 + 0 }') >> 20))
    grep -qE '"verified": ?true' <<<"$out" && grep -qE '"messages_delivered_min": ?54000' <<<"$out" ||
      fail "the 10x capture twice: $out"
    ((big <= small + ring + 32)) &&
      echo "ok: peak RSS ${big} MiB for $(stat -c %s "$work/big.pcapng") bytes twice over, ${small} MiB for $(stat -c %s "$work/built.pcapng") bytes once (read-ahead ring ${ring} MiB)" ||
      fail "peak RSS ${big} MiB for the 10x capture twice, ${small} MiB for the test's: more than the ${ring} MiB ring apart"
    check "compare the 10x records" python3 "$tools/compare_pcaps.py" "$work/big.pcapng" "$work/rec-big/member-7.pcap" \
      --loops 2 && echo "ok:   $(tail -1 <<<"$out")"
  fi
fi
rm -rf "$work/rec-big" "$work/rec-small"
exit $status
