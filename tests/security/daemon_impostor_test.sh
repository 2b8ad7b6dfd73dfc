#!/usr/bin/env bash
# An impostor `lanecast daemon` (docs/security.md, "The daemon's identity"):
#  1. `nobody` makes the daemon's directory in /dev/shm first and listens at
#     its control.sock. Clients - root's, and an ordinary user's - refuse it
#     with an error naming its uid, and send it nothing (the impostor counts
#     the bytes); a client told to trust `nobody` (--daemon-user) does speak
#     to it, so it is the check that stops the others;
#  2. the default directory, /run/lanecast/GROUP-rRANK: `nobody` cannot make
#     it first; the real daemon starts there without --dir and serves root's
#     clients;
#  3. a group whose name climbs out (x/../../../tmp/NAME) does not steer the
#     default directory: the daemon refuses the name and makes nothing at
#     the path it points to, even with the first step planted in /dev/shm.
#
# usage: daemon_impostor_test.sh lanecast stream_publisher stream_subscriber
set -u
bin=$(realpath "${1:?usage: daemon_impostor_test.sh lanecast stream_publisher stream_subscriber}")
pub=$(realpath "${2:?}")
sub=$(realpath "${3:?}")
here=$(dirname "$(realpath "${BASH_SOURCE[0]}")")
# shellcheck source=tests/security/daemon_net.sh
source "$here/daemon_net.sh"
daemon_net_skip_unless_root
# The system's python for other users: one under root's home is not theirs to run.
py=$(PATH=/usr/bin:/bin command -v python3)
command -v setpriv >/dev/null || { echo "SKIP: needs setpriv"; exit 77; }
tag=lcim$$
daemon_net_up "$tag"
shm=/dev/shm/lanecast-$tag-r0
run=/run/lanecast/$tag-r0
steer=/dev/shm/lanecast-x-$tag
trap 'member_net_test_cleanup; daemon_net_cleanup; rm -rf "$shm" "$run" "$steer" "/tmp/$tag-r0"' EXIT INT TERM
status=0
fail() { echo "FAIL: $*"; status=1; }
ok() { ((status == 0)) && echo "ok: $*"; }
as() { local u=$1; shift; setpriv --reuid "$u" --regid "$u" --clear-groups -- "$@"; }
impostor_bytes() { grep -o '^connection: [0-9]*' "$work/impostor.out" | awk '{ s += $2 } END { print s + 0 }'; }

# 1: nobody is first in /dev/shm.
setpriv --reuid 65534 --regid 65534 --clear-groups -- "$py" "$here/impostor_listener.py" "$shm" 50 \
  >"$work/impostor.out" 2>&1 &
impostor=$!
for ((t = 0; t < 100; t++)); do grep -q listening "$work/impostor.out" && break; sleep 0.05; done
grep -q listening "$work/impostor.out" || fail "the impostor did not listen: $(cat "$work/impostor.out")"
if timeout 20 "$sub" --dir "$shm" --count 1 --timeout 5 >"$work/root.out" 2>&1; then
  fail "root's subscriber took the impostor for its daemon"
fi
grep -q "refusing the daemon at $shm/control.sock: it runs as uid 65534 (nobody)" "$work/root.out" ||
  fail "root's subscriber: $(cat "$work/root.out")"
if as 4242 timeout 20 "$pub" --dir "$shm" --id 1 --count 1 >"$work/user.out" 2>&1; then
  fail "uid 4242's publisher took the impostor for its daemon"
fi
grep -q "it runs as uid 65534 (nobody).*not as root, this user (uid 4242)" "$work/user.out" ||
  fail "uid 4242's publisher: $(cat "$work/user.out")"
for ((t = 0; t < 100; t++)); do (($(grep -c '^connection' "$work/impostor.out") >= 2)) && break; sleep 0.05; done
got=$(impostor_bytes)
((got == 0)) || fail "the impostor received $got bytes from clients that refused it"
timeout 20 "$sub" --dir "$shm" --count 1 --timeout 5 --daemon-user nobody >"$work/trusting.out" 2>&1
for ((t = 0; t < 100; t++)); do (($(grep -c '^connection' "$work/impostor.out") >= 3)) && break; sleep 0.05; done
trusting=$(($(impostor_bytes) - got))
((trusting > 0)) || fail "a client trusting nobody sent nothing: $(cat "$work/trusting.out") / $(cat "$work/impostor.out")"
kill "$impostor" 2>/dev/null
wait "$impostor" 2>/dev/null
ok "clients of root and uid 4242 refused nobody's socket and sent it 0 bytes; one told to trust nobody sent $trusting"

# 2: the default place.
if as 65534 timeout 20 "$py" "$here/impostor_listener.py" "$run" 1 >"$work/impostor2.out" 2>&1; then
  fail "nobody made $run: $(cat "$work/impostor2.out")"
fi
grep -q "cannot make $run: Permission denied" "$work/impostor2.out" || fail "nobody at $run: $(cat "$work/impostor2.out")"
: >"$work/daemon.out"
daemon_net_dirs+=("$run")
ip netns exec "${tag}n0" timeout 300 "$bin" daemon --config "$work/group.toml" --rank 0 \
  --yield-when-idle --cores 1 --stats-interval 100 >>"$work/daemon.out" 2>&1 &
daemon_pid=$!
pids+=("$daemon_pid")
daemon_wait "$run"
grep -q "applications connect at $run/control.sock" "$work/daemon.out" || fail "daemon: $(head -3 "$work/daemon.out")"
[[ $(stat -c '%U %a' /run/lanecast) == "root 755" ]] || fail "/run/lanecast is $(stat -c '%U %a' /run/lanecast)"
timeout 30 "$sub" --dir "$run" --members 1 --ids 1 --count 20 --timeout 20 >"$work/sub.out" 2>&1 &
s=$!
sleep 0.3
timeout 30 "$pub" --dir "$run" --id 1 --count 20 >"$work/pub.out" 2>&1 || fail "publisher: $(cat "$work/pub.out")"
wait "$s" || fail "subscriber at the default place: $(cat "$work/sub.out")"
daemon_stop
ok "nobody could not make $run; the daemon started there without --dir and served 20 messages"

# 3: a name that climbs, its first step planted where the old default lay.
mkdir -p "$steer"
write_member_group discovery "$work/climb.toml" "x-$tag/../../../tmp/$tag" 48 20000 64K 1
if ip netns exec "${tag}n0" timeout 60 "$bin" daemon --config "$work/climb.toml" --rank 0 --cores 1 \
  --duration 1 >"$work/climb.out" 2>&1; then
  fail "a daemon ran for a group named x-$tag/../../../tmp/$tag"
fi
grep -q "cannot name the default --dir" "$work/climb.out" || fail "the climbing name: $(cat "$work/climb.out")"
[[ -e /tmp/$tag-r0 ]] && fail "the group's name made /tmp/$tag-r0"
ok "a group named x-$tag/../../../tmp/$tag was refused: $(head -1 "$work/climb.out")"
exit $status
