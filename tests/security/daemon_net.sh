# Sourced by the security scripts: one `lanecast daemon` of a one-member
# group on an af_packet veth in a namespace of its own (tests/net/
# member_net.sh makes it), and helpers to start it, wait for it and read
# its counters. Functions and variables only; nothing runs when sourced.
#
#   daemon_net_up TAG [NODES]  namespaces TAGn0.. (one member each, 1 by
#                              default), group file $work/group.toml of group
#                              TAG, trap that removes everything on exit
#   daemon_start DIR [ARGS...] a daemon serving DIR in the namespace;
#                              $daemon_pid, its output in $work/daemon.out
#   daemon_wait DIR [OUT]      until the daemon $daemon_pid, its output in OUT
#                              ($work/daemon.out), listens at DIR (30 s at most)
#   daemon_counter DIR NAME    a counter's value from `lanecast stat --once`
#   daemon_kill9 DIR           SIGKILL, until its socket no longer answers
#   daemon_stop                SIGTERM; the test fails unless it exits 0

# shellcheck source=tests/net/member_net.sh
source "$(dirname "${BASH_SOURCE[0]}")/../net/member_net.sh"

daemon_net_skip_unless_root() {
  if [[ $(id -u) -ne 0 ]] || ! command -v ip >/dev/null; then
    echo "SKIP: needs root and iproute2 to create a namespace and a veth"
    exit 77
  fi
}

daemon_net_up() {  # TAG [NODES]
  daemon_net_tag=$1
  daemon_net_dirs=()
  member_net_test "$1" "${2:-1}" 10.88.0  # lo up too (a UDP feed on 127.0.0.1)
  trap 'member_net_test_cleanup; daemon_net_cleanup' EXIT INT TERM
  write_member_group discovery "$work/group.toml" "$1" 47 20000 64K "${2:-1}"
}

daemon_net_cleanup() {
  local d
  for d in "${daemon_net_dirs[@]}"; do rm -rf "$d"; done
}

daemon_start() {  # DIR [ARGS...]
  local dir=$1
  shift
  daemon_net_dirs+=("$dir")
  # Emptied here, before the job starts: a redirection in the job would run
  # later, and daemon_wait could read the previous daemon's start-up line.
  : >"$work/daemon.out"
  ip netns exec "${daemon_net_tag}n0" timeout 300 "$bin" daemon --config "$work/group.toml" --rank 0 --dir "$dir" \
    --yield-when-idle --cores 1 --stats-interval 100 "$@" >>"$work/daemon.out" 2>&1 &
  daemon_pid=$!
  pids+=("$daemon_pid")
}

daemon_wait() {  # DIR [OUT]
  local t out=${2:-$work/daemon.out}
  for ((t = 0; t < 300; t++)); do
    # Its start-up line comes once it listens (a socket file alone may be
    # an earlier daemon's).
    [[ -S $1/control.sock ]] && grep -q "applications connect at" "$out" && return 0
    kill -0 "$daemon_pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "FAIL: the daemon never listened at $1: $(tail -5 "$out")"
  exit 1
}

daemon_counter() {  # DIR NAME -> value (0 when absent)
  "$bin" stat --dir "$1" --once --all 2>/dev/null | awk -v n="$2" '$1 == n { print $2; found = 1 } END { if (!found) print 0 }'
}

# SIGKILL to the daemon, then until its socket stops answering: a process
# killed with much memory mapped takes a while to close its descriptors.
daemon_kill9() {  # DIR
  local t
  {
    ip netns pids "${daemon_net_tag}n0" | xargs -r kill -9
    wait "$daemon_pid"
  } 2>/dev/null  # and bash's note that its job was killed
  for ((t = 0; t < 100; t++)); do
    python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
try:
    s.connect(sys.argv[1])
except OSError:
    sys.exit(0)
sys.exit(1)' "$1/control.sock" && return 0
    sleep 0.1
  done
  echo "FAIL: the killed daemon's socket still answers"
  status=1
}

# Stops the daemon with SIGTERM; fails the test unless it exits 0.
daemon_stop() {
  kill -TERM "$daemon_pid" 2>/dev/null
  wait "$daemon_pid"
  local rc=$?
  if ((rc != 0)); then
    echo "FAIL: the daemon exited $rc: $(tail -5 "$work/daemon.out")"
    status=1
  fi
}
