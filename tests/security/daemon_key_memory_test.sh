#!/usr/bin/env bash
# Where a keyed daemon keeps its group key (docs/security.md, "Core dumps
# and the environment"), read as root reads a process: given the key in
# LANECAST_GROUP_KEY, the running daemon's /proc/PID/environ no longer
# holds its digits, and every copy of the key's bytes in its memory lies in
# a mapping marked dd (VM_DONTDUMP) in /proc/PID/smaps - none would go into
# a core dump (key_pages.py).
#
# usage: daemon_key_memory_test.sh lanecast
set -u
bin=$(realpath "${1:?usage: daemon_key_memory_test.sh lanecast}")
here=$(dirname "$(realpath "${BASH_SOURCE[0]}")")
# shellcheck source=tests/security/daemon_net.sh
source "$here/daemon_net.sh"
daemon_net_skip_unless_root
tag=lckm$$
daemon_net_up "$tag"
dir=/dev/shm/lanecast-$tag-r0
status=0
fail() { echo "FAIL: $*"; status=1; }
hex=$(python3 -c 'import os; print(os.urandom(32).hex())')

LANECAST_GROUP_KEY=$hex daemon_start "$dir"
daemon_wait "$dir"
pid=$(ip netns pids "${tag}n0" | while read -r p; do
  [[ $(cat "/proc/$p/comm" 2>/dev/null) == lanecast ]] && echo "$p"
done | head -1)
[[ -n $pid ]] || { echo "FAIL: no lanecast process in the namespace"; exit 1; }
if python3 "$here/key_pages.py" "$pid" "$hex" >"$work/pages.out" 2>&1; then
  echo "ok: $(tr '\n' ';' <"$work/pages.out")"
else
  fail "$(cat "$work/pages.out")"
fi
daemon_stop
exit $status
