#!/usr/bin/env bash
# `lanecast daemon` as its systemd unit runs it (config/systemd/
# lanecast-daemon@.service.in; docs/daemon.md, "Running it as a service"):
# not root, with the unit's capabilities and nothing else of root's.
#  1. `systemd-analyze verify` accepts the unit (where it runs), whose
#     AmbientCapabilities= and CapabilityBoundingSet= name one set, each
#     capability of which docs/daemon.md's table explains;
#  2. the unit's own ExecStart - its shell line, with %i, %% and $$ read as
#     systemd reads them - runs both daemons of a two-member group, one per
#     namespace, as a user made for the test (the unit's User= and Group=),
#     under setpriv with exactly the unit's capabilities (inheritable,
#     ambient, bounding), its LimitMEMLOCK and no new privileges, in a
#     runtime directory made as systemd makes it: /proc shows each is that
#     user with exactly those capabilities; another user of the group
#     publishes on both members and subscribes on both, every message
#     arrives; SIGTERM stops them and their files go;
#  3. without each of the unit's capabilities, and with a memlock limit below
#     a lane's rings, the daemon stops at once saying what it lacks (so the
#     unit grants nothing the daemon does not need); an instance not named
#     GROUP-rRANK is refused by the unit's line.
# systemd does not run here: PrivateTmp= is stood in for by XDG_RUNTIME_DIR
# (where DPDK makes its runtime directory when the unit's line has taken
# RUNTIME_DIRECTORY away), the other sandboxing lines are only verified. The
# user and everything else are removed on any exit.
#
# usage: daemon_capabilities_test.sh lanecast stream_publisher stream_subscriber UNIT
set -u
usage="usage: daemon_capabilities_test.sh lanecast stream_publisher stream_subscriber UNIT"
bin=$(realpath "${1:?$usage}")
pub=$(realpath "${2:?$usage}")
sub=$(realpath "${3:?$usage}")
unit=$(realpath "${4:?$usage}")
docs=$(dirname "${BASH_SOURCE[0]}")/../../docs/daemon.md
# shellcheck source=tests/security/daemon_net.sh
source "$(dirname "${BASH_SOURCE[0]}")/daemon_net.sh"
daemon_net_skip_unless_root
for tool in setpriv prlimit capsh useradd userdel gpasswd; do
  command -v "$tool" >/dev/null || { echo "SKIP: needs $tool (capsh: apt-get install libcap2-bin)"; exit 77; }
done
status=0
fail() { echo "FAIL: $*"; status=1; }
ok() { ((status == 0)) && echo "ok: $*"; }

# The unit's KEY= values, its continued lines joined as systemd joins them.
unit_value() {
  sed -e ':a' -e '/\\$/{N;s/\\\n/ /;ba' -e '}' "$unit" | sed -n "s/^$1=//p"
}
# Capability names, one set: "cap_net_admin cap_net_raw" (capsh's spelling).
cap_set() { tr -s ' ,' '\n' | sed '/^$/d' | tr '[:upper:]' '[:lower:]' | sort -u | tr '\n' ' ' | sed 's/ $//'; }
# A systemd size (1024-based suffixes) in bytes.
bytes() {
  local n=${1%[KMGT]} m=1
  case $1 in *K) m=1024 ;; *M) m=$((1 << 20)) ;; *G) m=$((1 << 30)) ;; *T) m=$((1 << 40)) ;; esac
  echo $((n * m))
}

tag=lccap$$
user=lcd$$
daemon_net_up "$tag" 2
trap 'member_net_test_cleanup; daemon_net_cleanup; userdel "$user" 2>/dev/null' EXIT INT TERM

# 1: the unit itself.
caps=$(unit_value AmbientCapabilities | cap_set)
[[ -n $caps && $caps == "$(unit_value CapabilityBoundingSet | cap_set)" ]] ||
  fail "AmbientCapabilities= ($caps) and CapabilityBoundingSet= ($(unit_value CapabilityBoundingSet | cap_set)) differ"
for c in $caps; do
  grep -q "^| \`${c^^}\` |" "$docs" || fail "docs/daemon.md's capability table does not explain ${c^^}"
done
memlock=$(unit_value LimitMEMLOCK)
[[ $memlock =~ ^[0-9]+[KMGT]?$ ]] || fail "LimitMEMLOCK= is '$memlock', not a size"
memlock=$(bytes "$memlock")
# systemd raises the limit as root with CAP_SYS_RESOURCE; a container's root
# may lack it, and then the test runs under the hard limit it has (still
# above a lane's rings here: the check below with 1 MiB shows they count).
if ! prlimit --memlock="$memlock" true 2>/dev/null; then
  hard=$(awk '/^Max locked memory/ { print $5 }' /proc/self/limits)
  echo "note: cannot raise the memlock limit to the unit's $memlock bytes here (no CAP_SYS_RESOURCE): the daemons run with $hard"
  memlock=$hard
fi
user_group=$(unit_value Group)
if command -v systemd-analyze >/dev/null; then
  # Whether it verifies here at all: a unit that is surely right.
  mkdir "$work/units"
  printf '[Service]\nExecStart=/bin/true\n' >"$work/units/probe.service"
  if ! systemd-analyze verify --man=no "$work/units/probe.service" >"$work/verify.out" 2>&1; then
    echo "note: systemd-analyze cannot verify units here ($(head -1 "$work/verify.out")): the unit was not verified"
  # FILE:NAME verifies the template as one of its instances. No man page:
  # lanecast-daemon(1) comes with the installed program.
  elif systemd-analyze verify --man=no "$unit:lanecast-daemon@feed-r0.service" >"$work/verify.out" 2>&1 &&
    [[ ! -s $work/verify.out ]]; then
    echo "ok: systemd-analyze verify accepts the unit (as lanecast-daemon@feed-r0.service), without a warning"
  else
    fail "systemd-analyze verify: $(cat "$work/verify.out")"
  fi
else
  echo "note: no systemd-analyze (Debian: systemd): the unit was not verified"
fi
ok "the unit grants $caps (ambient and bounding alike, each in docs/daemon.md) and LimitMEMLOCK=$(unit_value LimitMEMLOCK)"

# 2 and 3 run in the namespaces, as a user made for the test.
useradd --system --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$user" ||
  { echo "SKIP: cannot add a user"; exit 77; }
gpasswd -a nobody "$user" >/dev/null  # a client user, as `usermod -aG lanecast alice`
uid=$(id -u "$user")
gid=$(id -g "$user")
# As systemd lays them out: the group file in the configuration directory,
# the runtime directory's parent root's, the directory the user's, 0750.
chmod 0755 "$work"
etc=$work/etc run=$work/run
install -d -m 0755 "$etc" "$run"
install -m 0644 "$work/group.toml" "$etc/$tag.toml"

# The unit's ExecStart for instance INSTANCE, as words in $cmd: specifiers
# and $$ resolved, the installed program replaced by the one under test, its
# --allow-group by the test's group.
exec_line() {  # INSTANCE
  local line
  line=$(unit_value ExecStart | sed 's/%%/\x01/g')
  if [[ $line =~ %[^i] ]]; then fail "ExecStart uses a specifier the test does not resolve: $line"; exit 1; fi
  # Quotes are read below as bash reads them; systemd also undoes backslash
  # escapes, so there must be none.
  if [[ $line == *\\* ]]; then fail "ExecStart holds a backslash: $line"; exit 1; fi
  # Every $ is the shell's ($$): systemd would expand a lone one itself.
  if [[ ${line//'$$'/} == *'$'* ]]; then fail "ExecStart holds a \$ that systemd would expand: $line"; exit 1; fi
  line=${line//%i/$1}
  line=${line//$'\x01'/%}
  line=${line//'$$'/'$'}
  eval "cmd=($line)"
  if [[ ${cmd[0]} != /bin/sh || ${cmd[3]} != */lanecast || ${cmd[4]} != "$1" ]]; then
    fail "ExecStart is not /bin/sh -c SCRIPT .../lanecast %i: ${cmd[*]}"
    exit 1
  fi
  if [[ ${cmd[2]} != *"--allow-group $user_group "* ]]; then
    fail "ExecStart's --allow-group is not the unit's Group= ($user_group)"
    exit 1
  fi
  cmd[2]=${cmd[2]//"--allow-group $user_group "/"--allow-group $user "}
  cmd[3]=$bin
}

# Runs the unit's ExecStart for INSTANCE in namespace NS with CAPS (names,
# "cap_net_raw cap_x") and a memlock limit of MEMLOCK bytes, output to OUT,
# as systemd would: the unit's user and its groups, a clean environment
# with the unit's directories. $daemon_pid: the timeout wrapping it.
run_unit() {  # NS INSTANCE CAPS MEMLOCK OUT [DAEMON ARGS]
  local ns=$1 instance=$2 set=$3 limit=$4 out=$5 c plus=""
  shift 5
  for c in $set; do plus+=",+${c#cap_}"; done
  exec_line "$instance"
  install -d -m 0750 -o "$user" -g "$user" "$run/$instance" "$work/tmp-$instance"
  daemon_net_dirs+=("$run/$instance")
  timeout 120 ip netns exec "$ns" prlimit --memlock="$limit" \
    setpriv --reuid="$user" --regid="$user" --init-groups --no-new-privs \
    --inh-caps="-all$plus" --ambient-caps="-all$plus" --bounding-set="-all$plus" -- \
    env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    CONFIGURATION_DIRECTORY="$etc" RUNTIME_DIRECTORY="$run/$instance" XDG_RUNTIME_DIR="$work/tmp-$instance" \
    LANECAST_DAEMON_ARGS="--yield-when-idle --cores 1 --stats-interval 100 $*" "${cmd[@]}" >"$out" 2>&1 &
  daemon_pid=$!
  pids+=("$daemon_pid")
}
# The capabilities of /proc/PID/status's line KEY, as a set.
proc_caps() {  # PID KEY
  capsh --decode="$(awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status")" | sed 's/^[^=]*=//' | cap_set
}

# 3 first, each on member 0 alone: what the daemon says without each
# capability, and with too little locked memory. Each stops at its port.
for c in $caps; do
  run_unit "${tag}n0" "$tag-r0" "$(tr ' ' '\n' <<<"$caps" | grep -vx "$c")" "$memlock" "$work/no-$c.out"
  wait "$daemon_pid"
  rc=$?
  if ((rc == 0 || rc == 124 || rc > 128)); then
    fail "without ${c^^} the daemon exited $rc (a start, a hang or a crash): $(tail -3 "$work/no-$c.out")"
  elif ! grep -q "needs ${c^^}" "$work/no-$c.out"; then
    fail "without ${c^^} the daemon exited $rc without saying it needs ${c^^}: $(tail -3 "$work/no-$c.out")"
  else
    echo "ok: without ${c^^}: exit $rc, $(grep -o "lanecast daemon: .*" "$work/no-$c.out" | head -1)"
  fi
done
run_unit "${tag}n0" "$tag-r0" "$caps" $((1 << 20)) "$work/memlock.out"
wait "$daemon_pid"
rc=$?
if ((rc == 0 || rc == 124 || rc > 128)) || ! grep -q "RLIMIT_MEMLOCK" "$work/memlock.out"; then
  fail "with 1 MiB of locked memory the daemon exited $rc: $(tail -3 "$work/memlock.out")"
else
  echo "ok: with LimitMEMLOCK=1M: exit $rc, $(grep -o "lanecast daemon: .*" "$work/memlock.out" | head -1)"
fi
run_unit "${tag}n0" "nonsense" "$caps" "$memlock" "$work/instance.out"
wait "$daemon_pid"
rc=$?
if grep -q "name the instance GROUP-rRANK" "$work/instance.out" && ((rc == 2)); then
  echo "ok: instance 'nonsense': exit 2, $(cat "$work/instance.out")"
else
  fail "instance 'nonsense': exit $rc, $(cat "$work/instance.out")"
fi

# 2: both members as the unit runs them.
daemons=()
for r in 0 1; do
  run_unit "${tag}n$r" "$tag-r$r" "$caps" "$memlock" "$work/daemon$r.out"
  daemons+=("$daemon_pid")
done
for r in 0 1; do
  daemon_pid=${daemons[r]}
  daemon_wait "$run/$tag-r$r" "$work/daemon$r.out"
done
for r in 0 1; do
  pid=$(ip netns pids "${tag}n$r" | head -1)
  [[ -n $pid && $(readlink "/proc/$pid/exe") == "$bin" ]] || { fail "member $r: the daemon is not $bin (pid '$pid')"; continue; }
  read -r _ ruid euid suid fsuid < <(grep '^Uid:' "/proc/$pid/status")
  read -r _ rgid egid sgid fsgid < <(grep '^Gid:' "/proc/$pid/status")
  [[ "$ruid $euid $suid $fsuid" == "$uid $uid $uid $uid" ]] || fail "member $r runs as uids $ruid $euid $suid $fsuid, not $uid"
  [[ "$rgid $egid $sgid $fsgid" == "$gid $gid $gid $gid" ]] || fail "member $r runs as gids $rgid $egid $sgid $fsgid, not $gid"
  for key in CapEff CapPrm CapAmb CapInh CapBnd; do
    got=$(proc_caps "$pid" "$key")
    [[ $got == "$caps" ]] || fail "member $r: $key is '$got', not '$caps'"
  done
  [[ $(awk '$1 == "NoNewPrivs:" { print $2 }' "/proc/$pid/status") == 1 ]] || fail "member $r may gain privileges"
  locked=$(awk '/^Max locked memory/ { print $4 }' "/proc/$pid/limits")
  ((locked == memlock)) || fail "member $r may lock $locked bytes, not $memlock"
  [[ $(stat -c '%a %U:%G' "$run/$tag-r$r") == "750 $user:$user" ]] ||
    fail "member $r's directory is $(stat -c '%a %U:%G' "$run/$tag-r$r")"
  entries=$(ls -A "$run/$tag-r$r" | tr '\n' ' ')
  [[ $entries == "control.sock stats " ]] || fail "member $r's directory holds $entries"
done
ok "both members run as $user (uid $uid), not root: effective, permitted, ambient, inheritable and bounding" \
  "capabilities exactly $caps; no new privileges; $memlock bytes of locked memory; directories 0750 $user:$user" \
  "holding control.sock and stats"

# nobody, whom the user database lists in the unit's group, is the client;
# it trusts the unit's user to answer, as the unit's clients are told to
# (LANECAST_DAEMON_USER), and would refuse any other daemon but root.
as_client() { LANECAST_DAEMON_USER=$user setpriv --reuid nobody --regid nogroup --init-groups -- "$@"; }
subs=()
for r in 0 1; do
  as_client timeout 90 "$sub" --dir "$run/$tag-r$r" --members 2 --ids 1 --count 5000 --timeout 60 --name "sub$r" \
    >"$work/sub$r.out" 2>&1 &
  subs+=($!)
done
sleep 0.5
for r in 0 1; do
  as_client timeout 90 "$pub" --dir "$run/$tag-r$r" --id 1 --count 5000 --size 200 --name "pub$r" >"$work/pub$r.out" 2>&1 ||
    fail "member $r's publisher: $(cat "$work/pub$r.out")"
done
for r in 0 1; do wait "${subs[r]}" || fail "member $r's subscriber: $(cat "$work/sub$r.out")"; done
ok "nobody (of group $user) published 5000 messages on each member; subscribers on both got all 10000 in order:" \
  "$(tail -1 "$work/sub1.out")"

# SIGTERM (through the timeout, as systemd's stop): the first to stop
# leaves the group, which the other may see first (exit 1, the group lost
# a member: the unit's Restart=on-failure).
for r in 0 1; do kill -TERM "${daemons[r]}"; done
for r in 0 1; do
  wait "${daemons[r]}"
  rc=$?
  ((rc == 0 || rc == 1)) || fail "member $r exited $rc on SIGTERM: $(tail -3 "$work/daemon$r.out")"
  entries=$(ls -A "$run/$tag-r$r")
  [[ -z $entries ]] || fail "member $r left $entries in its directory"
done
ok "SIGTERM stopped both; their sockets and stats files are gone"
exit $status
