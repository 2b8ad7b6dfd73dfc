#!/usr/bin/env bash
# The user model of a root `lanecast daemon` (docs/daemon.md, "Who may
# connect"), with clients run as other users (setpriv):
#  1. without --allow-group the directory is 0700 and its socket 0600: root's
#     clients work, nobody's cannot even reach the socket;
#  2. with --allow-group G (a group made for the test, listing nobody) the
#     directory is 0750 and the socket 0660, both of group G, the stats
#     file 0640: nobody publishes, subscribes and reads `lanecast stat`; a
#     user whose gid is G does too; a user whose process carries G but
#     whom the user database does not list in G passes the socket's mode
#     and is refused by the daemon - counted as "credentials"; a user
#     without G is stopped by the socket's mode.
# The group is removed on any exit.
#
# usage: daemon_users_test.sh lanecast stream_publisher stream_subscriber
set -u
bin=$(realpath "${1:?usage: daemon_users_test.sh lanecast stream_publisher stream_subscriber}")
pub=$(realpath "${2:?}")
sub=$(realpath "${3:?}")
# shellcheck source=tests/security/daemon_net.sh
source "$(dirname "${BASH_SOURCE[0]}")/daemon_net.sh"
daemon_net_skip_unless_root
for tool in setpriv groupadd groupdel gpasswd; do
  command -v "$tool" >/dev/null || { echo "SKIP: needs $tool"; exit 77; }
done
tag=lcus$$
grp=lcg$$
daemon_net_up "$tag"
trap 'member_net_test_cleanup; daemon_net_cleanup; groupdel "$grp" 2>/dev/null' EXIT INT TERM
groupadd "$grp" || { echo "SKIP: cannot add a group"; exit 77; }
gpasswd -a nobody "$grp" >/dev/null
status=0
fail() { echo "FAIL: $*"; status=1; }
ok() { ((status == 0)) && echo "ok: $*"; }

# as USER GROUP GROUPS COMMAND...: run as another user (GROUPS: its
# supplementary groups, "-" none).
as() {
  local user=$1 group=$2 groups=$3
  shift 3
  if [[ $groups == - ]]; then
    setpriv --reuid "$user" --regid "$group" --clear-groups -- "$@"
  else
    setpriv --reuid "$user" --regid "$group" --groups "$groups" -- "$@"
  fi
}
mode() { stat -c '%a %U:%G' "$1"; }

# 1: the daemon's own user and root only.
dir=/dev/shm/lanecast-$tag-own
daemon_start "$dir"
daemon_wait "$dir"
[[ $(mode "$dir") == "700 root:root" ]] || fail "DIR is $(mode "$dir")"
[[ $(mode "$dir/control.sock") == "600 root:root" ]] || fail "control.sock is $(mode "$dir/control.sock")"
timeout 60 "$sub" --dir "$dir" --members 1 --ids 1 --count 300 --timeout 50 --name root-sub >"$work/s1.out" 2>&1 &
s1=$!
sleep 0.3
timeout 60 "$pub" --dir "$dir" --id 1 --count 300 >"$work/p1.out" 2>&1 || fail "root's publisher: $(cat "$work/p1.out")"
wait "$s1" || fail "root's subscriber: $(cat "$work/s1.out")"
if as nobody nogroup - timeout 20 "$sub" --dir "$dir" --members 1 --ids 1 --count 1 --timeout 5 >"$work/n1.out" 2>&1; then
  fail "nobody connected to a daemon without --allow-group"
else
  grep -q "Permission denied" "$work/n1.out" || fail "nobody was stopped, but not by the socket's mode: $(cat "$work/n1.out")"
fi
ok "without --allow-group: DIR 0700, socket 0600; root's clients work, nobody cannot reach the socket"
daemon_stop

# 2: --allow-group.
dir=/dev/shm/lanecast-$tag-group
daemon_start "$dir" --allow-group "$grp"
daemon_wait "$dir"
[[ $(mode "$dir") == "750 root:$grp" ]] || fail "DIR is $(mode "$dir")"
[[ $(mode "$dir/control.sock") == "660 root:$grp" ]] || fail "control.sock is $(mode "$dir/control.sock")"
[[ $(mode "$dir/stats") == "640 root:$grp" ]] || fail "stats is $(mode "$dir/stats")"
as nobody nogroup "$grp" timeout 60 "$sub" --dir "$dir" --members 1 --ids 1,2 --count 300 --timeout 50 --name nobody-sub \
  >"$work/s2.out" 2>&1 &
s2=$!
sleep 0.3
as nobody nogroup "$grp" timeout 60 "$pub" --dir "$dir" --id 1 --count 300 --name nobody-pub >"$work/p2.out" 2>&1 ||
  fail "nobody's publisher (listed in the group): $(cat "$work/p2.out")"
as bin "$grp" - timeout 60 "$pub" --dir "$dir" --id 2 --count 300 --name bin-pub >"$work/p3.out" 2>&1 ||
  fail "bin's publisher (gid of the group): $(cat "$work/p3.out")"
wait "$s2" || fail "nobody's subscriber: $(cat "$work/s2.out")"
as nobody nogroup "$grp" "$bin" stat --dir "$dir" --once >"$work/stat.out" 2>&1 || fail "nobody's stat: $(cat "$work/stat.out")"
ok "--allow-group $grp: DIR 0750, socket 0660, stats 0640 of the group; nobody (listed) and bin (gid) publish," \
  "subscribe and read lanecast stat"
# The process carries the group, the user database does not list the user in it.
if as daemon daemon "$grp" timeout 20 "$sub" --dir "$dir" --members 1 --ids 1 --count 1 --timeout 5 >"$work/d.out" 2>&1; then
  fail "user daemon (not in the group's list) was served"
else
  grep -q "refused (credentials)" "$work/d.out" || fail "user daemon: not refused for its credentials: $(cat "$work/d.out")"
fi
if as sys sys - timeout 20 "$sub" --dir "$dir" --members 1 --ids 1 --count 1 --timeout 5 >"$work/y.out" 2>&1; then
  fail "user sys (no group) was served"
else
  grep -q "Permission denied" "$work/y.out" || fail "user sys: not stopped by the socket's mode: $(cat "$work/y.out")"
fi
sleep 0.3
refused=$(daemon_counter "$dir" 'lanecast_clients_refused_by_reason{reason="credentials"}')
((refused == 1)) || fail "the daemon counted $refused refusals for credentials, not 1"
ok "a process carrying the group for a user not in it is refused by the daemon (counted: $refused);" \
  "a user without it by the socket's mode"
daemon_stop
exit $status
