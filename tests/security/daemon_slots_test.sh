#!/usr/bin/env bash
# What a welcomed application may keep of `lanecast daemon` (docs/daemon.md,
# "Limits"), attacked with connections that say a good hello and then
# nothing (raw_client.py hold):
#  1. one user cannot take every slot: `nobody` (let in by --allow-group)
#     opens more connections than --max-clients-per-user; the one past it
#     is refused (too_many_for_user) while root's subscriber and publisher
#     still get in under --max-clients;
#  2. a welcomed subscriber that never reads its ring is evicted once a
#     message waited in it for --evict-after (its ring far from full), told
#     by its socket's hang-up, and its slot and memory are free again
#     (lanecast_clients, lanecast_clients_memory_bytes back where they were).
#
# usage: daemon_slots_test.sh lanecast stream_publisher stream_subscriber
set -u
bin=$(realpath "${1:?usage: daemon_slots_test.sh lanecast stream_publisher stream_subscriber}")
pub=$(realpath "${2:?}")
sub=$(realpath "${3:?}")
raw=$(dirname "$(realpath "${BASH_SOURCE[0]}")")/raw_client.py
# shellcheck source=tests/security/daemon_net.sh
source "$(dirname "${BASH_SOURCE[0]}")/daemon_net.sh"
daemon_net_skip_unless_root
# The system's python for other users: one under root's home is not theirs to run.
py=$(PATH=/usr/bin:/bin command -v python3)
for tool in setpriv groupadd groupdel; do
  command -v "$tool" >/dev/null || { echo "SKIP: needs $tool"; exit 77; }
done
tag=lcsl$$
grp=lcsg$$
daemon_net_up "$tag"
trap 'member_net_test_cleanup; daemon_net_cleanup; groupdel "$grp" 2>/dev/null' EXIT INT TERM
groupadd "$grp" || { echo "SKIP: cannot add a group"; exit 77; }
dir=/dev/shm/lanecast-$tag-r0
status=0
fail() { echo "FAIL: $*"; status=1; }
ok() { ((status == 0)) && echo "ok: $*"; }
# Started by setpriv itself in the background, so that $! is the holder
# and `kill` reaches it (a shell function would stand between them).
nobody=(setpriv --reuid nobody --regid "$grp" --clear-groups --)
# until COUNTER equals VALUE (20 s at most); prints the last value read
counter_becomes() {
  local t v
  for ((t = 0; t < 200; t++)); do
    v=$(daemon_counter "$dir" "$1")
    [[ $v == "$2" ]] && break
    sleep 0.1
  done
  echo "$v"
}

daemon_start "$dir" --allow-group "$grp" --max-clients 8 --max-clients-per-user 3 --evict-after 500
daemon_wait "$dir"

# 1: nobody asks for four slots of eight.
"${nobody[@]}" "$py" "$raw" "$dir/control.sock" hold 1 4 30 >"$work/hog.out" 2>&1 &
hog=$!
for ((t = 0; t < 200; t++)); do (($(wc -l <"$work/hog.out") >= 4)) && break; sleep 0.05; done
[[ $(grep -c '^welcomed' "$work/hog.out") == 3 ]] || fail "nobody's four connections: $(cat "$work/hog.out")"
grep -q "^11 uid 65534 holds 3 connections already (--max-clients-per-user)" "$work/hog.out" ||
  fail "the fourth of nobody's connections: $(cat "$work/hog.out")"
timeout 30 "$sub" --dir "$dir" --members 1 --ids 1 --count 20 --timeout 20 --name root-sub >"$work/sub.out" 2>&1 &
s=$!
sleep 0.3
timeout 30 "$pub" --dir "$dir" --id 1 --count 20 >"$work/pub.out" 2>&1 || fail "root's publisher: $(cat "$work/pub.out")"
wait "$s" || fail "root's subscriber beside nobody's three: $(cat "$work/sub.out")"
[[ $(daemon_counter "$dir" 'lanecast_clients_refused_by_reason{reason="too_many_for_user"}') == 1 ]] ||
  fail "too_many_for_user counted $(daemon_counter "$dir" 'lanecast_clients_refused_by_reason{reason="too_many_for_user"}')"
kill "$hog" 2>/dev/null
wait "$hog" 2>/dev/null
[[ $(counter_becomes lanecast_clients 0) == 0 ]] || fail "clients left after the holder went"
ok "nobody got 3 slots of 8 (--max-clients-per-user 3), the 4th was refused and counted; root's clients got in"

# 2: a subscriber that is welcomed and then reads nothing.
memory0=$(daemon_counter "$dir" lanecast_clients_memory_bytes)
"${nobody[@]}" "$py" "$raw" "$dir/control.sock" hold 2 1 30 >"$work/silent.out" 2>&1 &
silent=$!
[[ $(counter_becomes lanecast_clients 1) == 1 ]] || fail "the silent subscriber was never welcomed: $(cat "$work/silent.out")"
memory1=$(daemon_counter "$dir" lanecast_clients_memory_bytes)
((memory1 > memory0)) || fail "the silent subscriber holds no memory ($memory0 -> $memory1)"
# Five small messages: its 16M ring stays far from full.
timeout 30 "$pub" --dir "$dir" --id 1 --count 5 >"$work/pub2.out" 2>&1 || fail "publisher: $(cat "$work/pub2.out")"
evicted=$(counter_becomes 'lanecast_clients_evicted_by_reason{reason="not_reading"}' 1)
[[ $evicted == 1 ]] || fail "the silent subscriber was not evicted for not reading ($evicted)"
[[ $(counter_becomes lanecast_clients 0) == 0 ]] || fail "the evicted subscriber still holds its slot"
[[ $(counter_becomes lanecast_clients_memory_bytes "$memory0") == "$memory0" ]] ||
  fail "the evicted subscriber's memory was not freed ($(daemon_counter "$dir" lanecast_clients_memory_bytes))"
wait "$silent"
grep -q '^hung up' "$work/silent.out" || fail "the silent subscriber's socket stayed open: $(cat "$work/silent.out")"
ok "a subscriber that read nothing was evicted (not_reading) with its ring far from full; its slot and" \
  "$((memory1 - memory0)) bytes came back"

daemon_stop
exit $status
