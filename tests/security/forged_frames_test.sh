#!/usr/bin/env bash
# A host on the segment attacks a group - for real. Member processes, each
# in its own network namespace, form a group on a Linux bridge and serve
# broadcasts (`lanecast run --serve`, every byte checked); an attacker in a
# namespace of its own on the same bridge (forge_frames: a raw AF_PACKET
# socket) sees every frame - the switch mirrors each member's port to it, as
# a switch's monitor port or a tap would - and records it with tcpdump for
# later. The switch does not learn addresses on the attacker's port: its
# spoofed source MACs would otherwise move the members' addresses there and
# the switch would hand it their traffic - a denial of service no key
# prevents (static MAC tables and port security do), which would also keep
# its forgeries from the members it targets. The attacker forges frames of
# the group (right group id and epoch, right CRCs, a member's MAC and rank):
# data and datagrams with bytes of its own, acks, failure notices, stream
# batches, hellos - unsealed and sealed under a wrong key - and sends genuine
# frames again: replayed from the capture, with payload bits changed where
# the CRC cannot see, and readdressed to another member.
#
#   With a key: the attacker runs from before the members start (hellos
#   against the bootstrap) and all the while they serve, then again from its
#   tcpdump capture; then the same against a stream (`lanecast bench
#   --stream`, every message checked). Every broadcast and message is
#   verified, nobody is lost, no forged failure notice is believed, and the
#   members' counters show the refused frames by reason (tables printed).
#   Without a key, the same group: forged segments, one failure notice,
#   forged hellos at its bootstrap, forged stream batches. What each did is
#   printed, and at least one must have done a harm only a forgery does (a
#   member holding the attacker's bytes or acknowledging frames never sent
#   to it, told that it is itself lost, or meeting its own rank elsewhere) -
#   so the attack is proven potent, and a key that silently did nothing
#   would fail the first part.
#
# Everything this test creates is removed on any exit.
#
# usage: forged_frames_test.sh path/to/lanecast path/to/forge_frames [MEMBERS]
set -u
usage="usage: forged_frames_test.sh path/to/lanecast path/to/forge_frames [MEMBERS]"
bin=${1:?$usage}
forge=${2:?$usage}
nodes=${3:-4}
if [[ $(id -u) -ne 0 ]] || ! command -v ip >/dev/null || ! command -v tc >/dev/null; then
  echo "SKIP: needs root, iproute2 and tc to create namespaces, a bridge and veths"
  exit 77
fi
if ! command -v tcpdump >/dev/null; then
  echo "SKIP: needs tcpdump (the capture the attacker replays)"
  exit 77
fi
tag=lcfa$$
# shellcheck source=tests/net/member_net.sh
source "$(dirname "${BASH_SOURCE[0]}")/../net/member_net.sh"
member_net_test "$tag" "$nodes"
attacker_ns=${tag}a
# shellcheck disable=SC2317  # the trap runs it
cleanup() {
  ip netns pids "$attacker_ns" 2>/dev/null | xargs -r kill -9 2>/dev/null
  ip netns del "$attacker_ns" 2>/dev/null
  member_net_test_cleanup
}
trap cleanup EXIT INT TERM
status=0
fail() {
  echo "FAIL: $*"
  status=1
}

# The attacker: a veth on the members' bridge, and every member's port
# mirrored to it (where tc cannot mirror, the bridge floods every frame).
ip netns add "$attacker_ns"
ip netns exec "$attacker_ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
ip -n "$attacker_ns" link add a0 type veth peer name bA netns "${tag}s"
ip -n "${tag}s" link set bA master br0 up
ip -n "${tag}s" link set dev bA type bridge_slave learning off
ip -n "$attacker_ns" link set a0 up
mirrored=1
for ((i = 0; i < nodes; i++)); do
  ip netns exec "${tag}s" tc qdisc add dev "b$i" clsact 2>/dev/null &&
    ip netns exec "${tag}s" tc filter add dev "b$i" ingress protocol all u32 match u32 0 0 \
      action mirred egress mirror dev bA 2>/dev/null || mirrored=0
done
if ((mirrored)); then
  echo "# the attacker sees every frame: each member's bridge port is mirrored to its own (tc mirred)"
else
  ip -n "${tag}s" link set br0 type bridge ageing_time 0
  echo "# tc cannot mirror here: the bridge floods every frame (ageing_time 0), the attacker sees them all"
fi

# The group: discovery, chain, a key file only root reads.
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$work/group.key"
chmod 600 "$work/group.key"
write_member_group discovery "$work/plain.toml" attacked 31 5000 1M "$nodes"
sed -i 's/^\[group\]$/[group]\nalgo = "chain"/' "$work/plain.toml"
sed 's/^\[group\]$/[group]\nkey_file = "group.key"/' "$work/plain.toml" >"$work/keyed.toml"

# --- members --------------------------------------------------------------

# Members serve broadcasts until the root is told to stop (every byte
# checked), or run a stream of a given length (every message checked).
nsizes=4
# shellcheck disable=SC2054  # the commas are lanecast's lists
serve=(run --serve --sizes 2,1428,64K,256K --iters 2 --yield-when-idle --progress calls --counters)
# shellcheck disable=SC2054
stream=(bench --stream --sizes 64,1K --messages 10000 --msg-rate 10000 --warmup 100 --yield-when-idle --progress calls
  --counters)
mpids=()
start_members() {  # NAME GROUP_FILE lanecast-command...
  local i name=$1 file=$2
  shift 2
  mpids=()
  for ((i = 0; i < nodes; i++)); do
    timeout 60 ip netns exec "${tag}n$i" "$bin" "$@" --config "$file" --rank "$i" >"$work/$name.$i.out" 2>&1 &
    mpids+=($!)
    pids+=($!)
  done
}
# formed NAME: every member printed its group (0), or one left first (1).
formed() {
  local t i n
  for ((t = 0; t < 300; t++)); do  # at most 15 s
    n=0
    for ((i = 0; i < nodes; i++)); do
      grep -q "^# lanecast run" "$work/$1.$i.out" && n=$((n + 1))
      kill -0 "${mpids[i]}" 2>/dev/null || return 1
    done
    ((n == nodes)) && return 0
    sleep 0.05
  done
  return 1
}
# verified NAME: lines of broadcasts every member verified, the fewest.
verified() {
  local i n least=1000000
  for ((i = 0; i < nodes; i++)); do
    n=$(grep -c " yes$" "$work/$1.$i.out")
    ((n < least)) && least=$n
  done
  echo "$least"
}
# stop_members [SIGNAL]: the root's signal stops every member at the end
# of a round (`run --serve`); waits (bounded by their timeout) and keeps
# each member's exit status in mrc. SIGNAL 0: wait for them to finish.
mrc=()
stop_members() {
  local i
  kill -"${1:-TERM}" "${mpids[0]}" 2>/dev/null
  mrc=()
  for ((i = 0; i < nodes; i++)); do
    wait "${mpids[i]}"
    mrc+=($?)
  done
}
# kill_members: whatever still runs of this group goes (each member is the
# child of its `timeout`, which then dies as it did: bash's notice of that
# goes nowhere).
kill_members() {
  local p
  for p in "${mpids[@]}"; do pkill -9 -P "$p"; done
  for p in "${mpids[@]}"; do wait "$p"; done
} 2>/dev/null

# --- the attacker -----------------------------------------------------------

apid=
attack() {  # OUTPUT forge_frames-options...
  local out=$1
  shift
  ip netns exec "$attacker_ns" "$forge" --iface a0 "$@" >"$work/$out" 2>&1 &
  apid=$!
  pids+=("$apid")
}
stop_attack() {
  kill -TERM "$apid" 2>/dev/null
  wait "$apid"
  local rc=$?
  sed "s/^/[attacker] /" "$work/$1"
  return $rc
}
# sent OUTPUT KIND [SEAL]: frames the attacker's table says it sent.
sent() {
  awk -v k="$2" -v s="${3:-}" '$1 == k && (s == "" || $2 == s) { n += $NF } END { print n + 0 }' "$work/$1"
}

# The members' counters by reason, a row per member and the sum; also left
# in $work/NAME.table for the assertions.
reasons="rx_unsealed rx_bad_tag rx_replayed rx_stale_counter rx_bad_payload_seal rx_hello rx_wrong_epoch rx_failure_notices ops_failed"
counter_table() {  # NAME
  local i
  for ((i = 0; i < nodes; i++)); do grep "^rank [0-9]*:" "$work/$1.$i.out" | tail -1; done |
    awk -v reasons="$reasons" '
      BEGIN { n = split(reasons, r, " "); printf "%-6s", "member"; for (i = 1; i <= n; i++) printf " %s", r[i]; printf "\n" }
      {
        delete v
        for (f = 3; f <= NF; f++) { split($f, kv, "="); v[kv[1]] = kv[2] }
        printf "%-6s", $2
        for (i = 1; i <= n; i++) { printf " %*d", length(r[i]), v[r[i]]; sum[i] += v[r[i]] }
        printf "\n"
      }
      END { printf "%-6s", "all"; for (i = 1; i <= n; i++) printf " %*d", length(r[i]), sum[i]; printf "\n" }' |
    tee "$work/$1.table"
}
# total NAME COUNTER: the sum over the members.
total() {
  awk -v c="$2" 'NR == 1 { for (i = 2; i <= NF; i++) col[$i] = i } $1 == "all" { print $col[c] }' "$work/$1.table"
}
show() {  # NAME: every member's output, prefixed (its verified sizes counted, not listed)
  local i
  for ((i = 0; i < nodes; i++)); do
    grep -v "^ *[0-9.]*[KM]\? *[0-9]* *[0-9.]* *[0-9.]* *yes$" "$work/$1.$i.out" | sed "s/^/[$1 rank $i] /"
    echo "[$1 rank $i] ($(grep -c " yes$" "$work/$1.$i.out") sizes verified)"
  done
}

# === 1. With a key ============================================================
echo "# 1. a group of $nodes with a key, attacked from before it forms until it stops (at ${SECONDS} s)"
# The attacker's own capture of what its port receives (not what it sends).
ip netns exec "$attacker_ns" tcpdump -i a0 -Q in -U -c 20000 -w "$work/earlier.pcap" ether proto 0x88b5 \
  >"$work/tcpdump.out" 2>&1 &
tcpdump_pid=$!
pids+=("$tcpdump_pid")
for ((t = 0; t < 100; t++)); do  # tcpdump listening (at most 5 s)
  grep -q "listening on" "$work/tcpdump.out" && break
  sleep 0.05
done
attack live.attack --rate 3000 --kinds all --replay-age-ms 20
start_members keyed "$work/keyed.toml" "${serve[@]}"
if ! formed keyed; then
  fail "the group with a key did not form under attack"
  show keyed
  exit 1
fi
sleep 3
stop_attack live.attack || fail "the live attacker exited $?"
kill -TERM "$tcpdump_pid" 2>/dev/null
wait "$tcpdump_pid"
echo "# the attacker's capture ($(stat -c %s "$work/earlier.pcap") bytes) sent again, with forgeries, for 3 s (at ${SECONDS} s)"
attack pcap.attack --rate 3000 --pcap "$work/earlier.pcap" --duration-ms 3000 \
  --kinds replay,replay-altered,data,datagram,ack,failed,stream
wait "$apid"
sed "s/^/[attacker] /" "$work/pcap.attack"
stop_members
echo "# members stopped (at ${SECONDS} s)"
show keyed
echo "# frames the members refused, by reason (with a key):"
counter_table keyed
for ((i = 0; i < nodes; i++)); do
  ((mrc[i] == 0)) || fail "rank $i exited ${mrc[i]} under attack with a key"
done
grep -h "FAILED" "$work"/keyed.*.out && fail "a broadcast failed under attack with a key"
rounds=$(verified keyed)
((rounds >= nsizes)) || fail "only $rounds sizes verified by every member (want $nsizes or more)"
for k in data datagram ack failed stream hello replay replay-altered redirect; do
  n=$(($(sent live.attack "$k") + $(sent pcap.attack "$k")))
  ((n > 0)) || fail "the attacker sent no $k frames: it learned too little to attack"
done
(($(total keyed rx_unsealed) > 0)) || fail "no unsealed frame was counted (rx_unsealed)"
(($(total keyed rx_bad_tag) > 0)) || fail "no frame under a wrong key was counted (rx_bad_tag)"
(($(total keyed rx_replayed) > 0)) || fail "no replay was counted (rx_replayed)"
# Every unsealed frame went to one member, which counted it: most of them
# must show (a frame may be lost to a full socket buffer).
unsealed_sent=0
for k in data datagram ack failed stream; do
  unsealed_sent=$((unsealed_sent + $(sent live.attack "$k" unsealed) + $(sent pcap.attack "$k" unsealed)))
done
echo "# unsealed frames sent to members: $unsealed_sent, counted by them: $(total keyed rx_unsealed)"
((2 * $(total keyed rx_unsealed) >= unsealed_sent)) || fail "the members counted fewer than half the unsealed frames sent"
# The same for frames under a wrong key: their counters were ahead of the
# windows, so each met the tag. Readdressed genuine frames meet it too.
wrong_sent=0
for k in data datagram ack failed stream; do
  wrong_sent=$((wrong_sent + $(sent live.attack "$k" wrong-key) + $(sent pcap.attack "$k" wrong-key)))
done
redirected=$(sent live.attack redirect)
echo "# frames under a wrong key sent to members: $wrong_sent, readdressed: $redirected; bad tags counted: $(total keyed rx_bad_tag)"
((2 * $(total keyed rx_bad_tag) >= wrong_sent)) || fail "the members counted fewer than half the wrong-key frames sent"
# Beyond those, only a readdressed frame whose counter its new receiver had
# not seen meets the tag (replays to their own receiver are refused by the
# window first). Without the destination under the tag, those would open.
(($(total keyed rx_bad_tag) > wrong_sent)) || fail "no readdressed frame was refused by its tag"
# Forged hellos met the bootstrap: refused there, counted (run prints them).
grep -h "hellos refused" "$work"/keyed.*.out | sed "s/^/#   /"
grep -q "hellos refused: .* with a bad tag" "$work"/keyed.*.out ||
  fail "no member refused a forged hello while the group formed"
(($(total keyed rx_failure_notices) == 0)) || fail "a member believed a failure notice"
(($(total keyed ops_failed) == 0)) || fail "a broadcast failed"
echo "# with a key: every broadcast verified ($rounds sizes x 2 broadcasts, by every member), nothing forged taken"

echo "# 1b. a stream with a key, attacked from before its group forms until it ends (at ${SECONDS} s)"
sed 's/^id = .*/id = 33/' "$work/keyed.toml" >"$work/keyed_stream.toml"
attack stream.attack --group 33 --rate 3000 --kinds all --replay-age-ms 20
start_members keyed_stream "$work/keyed_stream.toml" "${stream[@]}"
stop_members 0
stop_attack stream.attack || fail "the stream's attacker exited $?"
show keyed_stream
echo "# frames the stream's members refused, by reason (with a key):"
counter_table keyed_stream
for ((i = 0; i < nodes; i++)); do
  ((mrc[i] == 0)) || fail "stream member $i exited ${mrc[i]} under attack with a key"
done
(($(grep -c " yes$" "$work/keyed_stream.0.out") == 2)) || fail "the stream's 2 sizes were not both verified"
if (($(sent stream.attack stream) == 0)) || ! grep -q "; stream 0 of rank 0" "$work/stream.attack"; then
  fail "the attacker forged no batch of the stream it saw"
fi
(($(total keyed_stream rx_unsealed) > 0 && $(total keyed_stream rx_bad_tag) > 0)) ||
  fail "the stream's members counted no forged frame"
(($(total keyed_stream rx_failure_notices) == 0)) || fail "a stream member believed a failure notice"

# === 2. Without a key ==========================================================
echo "# 2. the same group without a key, the same attacks (at ${SECONDS} s)"
harm=0
# describe NAME: what the members said of the attack's effect.
describe() {
  grep -h "FAILED\|lost rank\|gave up\|started as rank\|answers from two" \
    "$work/$1".*.out | sort | uniq -c | sed "s/^/#   /"
}

# 2a. Segments of its own, for the running broadcast and the next ones (one
# size: the next broadcasts' plans agree with the forgeries'), from the
# group's first broadcast on.
attack forged.attack --rate 3000 --kinds data,datagram,stream --seals unsealed
start_members forged "$work/plain.toml" run --serve --sizes 64K --iters 2 --yield-when-idle --progress calls \
  --counters
for ((t = 0; t < 100; t++)); do  # until a member fails (at most 5 s)
  grep -q "FAILED" "$work"/forged.*.out && break
  sleep 0.05
done
stop_attack forged.attack
kill_members
# Only a forgery makes a member's check of the bytes fail, brings a plan no
# root sent, or has a member acknowledge frames its sender never sent
# (rx_bad_ack: it took forged ones under their sequence numbers, and the
# sender's own as duplicates).
if grep -q "differs from the root's\|sends a different broadcast\|rx_bad_ack=" "$work"/forged.*.out; then
  harm=$((harm + 1))
  echo "# 2a. forged segments (no key): members took the attacker's bytes, its plan, or its sequence numbers:"
  grep -h "^rank [0-9]*:" "$work"/forged.*.out |
    awk '{ t = ""; for (f = 3; f <= NF; f++) if ($f ~ /^rx_(bad_ack|duplicate)=/) t = t " " $f }
         t != "" { print "#   " $1 " " $2 t }'
  describe forged
else
  echo "# 2a. forged segments (no key): no visible harm this time"
fi

echo "# (at ${SECONDS} s)"
# 2b. One failure notice.
start_members notice "$work/plain.toml" "${serve[@]}"
if formed notice; then
  attack notice.attack --kinds failed --seals unsealed --count 1 --learn-ms 500
  wait "$apid"
  sed "s/^/[attacker] /" "$work/notice.attack"
  for ((t = 0; t < 100; t++)); do  # until every member failed (at most 5 s)
    (($(grep -l "FAILED" "$work"/notice.*.out 2>/dev/null | wc -l) == nodes)) && break
    sleep 0.05
  done
fi
kill_members
# A member told that it is itself lost: only a false notice says that.
broken=$(grep -l "FAILED: .*lost rank" "$work"/notice.*.out 2>/dev/null | wc -l)
told=0
for ((i = 0; i < nodes; i++)); do grep -q "FAILED: .*the group lost rank $i " "$work/notice.$i.out" && told=1; done
if ((broken > 0 && told)); then
  harm=$((harm + 1))
  echo "# 2b. one forged failure notice (no key): $broken of $nodes members failed, the group broken:"
  describe notice
else
  echo "# 2b. one forged failure notice (no key): no visible harm this time"
fi

echo "# (at ${SECONDS} s)"
# 2c. Hellos at its bootstrap.
attack hello.attack --kinds hello --seals unsealed --rate 500
start_members hello "$work/plain.toml" "${serve[@]}"
for ((t = 0; t < 100; t++)); do  # every member left, or formed and serves (at most 5 s)
  left=0
  for ((i = 0; i < nodes; i++)); do
    kill -0 "${mpids[i]}" 2>/dev/null && ! grep -q " yes$" "$work/hello.$i.out" || left=$((left + 1))
  done
  ((left == nodes)) && break
  sleep 0.05
done
stop_attack hello.attack
kill_members
aborted=$(grep -l "started as rank\|answers from two" "$work"/hello.*.out 2>/dev/null | wc -l)
if ((aborted > 0)); then
  harm=$((harm + 1))
  echo "# 2c. forged hellos (no key): $aborted of $nodes members gave up forming the group:"
  describe hello
else
  echo "# 2c. forged hellos (no key): no visible harm this time"
fi
echo "# (at ${SECONDS} s)"
# 2d. Stream batches of its own.
sed 's/^id = .*/id = 33/' "$work/plain.toml" >"$work/plain_stream.toml"
attack plain_stream.attack --group 33 --rate 3000 --kinds stream --seals unsealed --learn-ms 300
start_members plain_stream "$work/plain_stream.toml" "${stream[@]}"
stop_members 0
stop_attack plain_stream.attack
failed_members=0
for ((i = 0; i < nodes; i++)); do ((mrc[i] == 0)) || failed_members=$((failed_members + 1)); done
if ((failed_members > 0)); then
  echo "# 2d. forged stream batches (no key): $failed_members of $nodes members failed (not counted below: what"
  echo "#     a failed stream says does not name a forgery):"
  grep -h "FAILED\\|lanecast bench:" "$work"/plain_stream.*.out | sort | uniq -c | sed "s/^/#   /"
else
  echo "# 2d. forged stream batches (no key): no visible harm this time"
fi
((harm > 0)) || fail "without a key no forged frame did harm: the attack is too weak to prove the key"
echo "# without a key: $harm of 3 attacks did harm that only a forgery causes (at ${SECONDS} s)"
exit $status
