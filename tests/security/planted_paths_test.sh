#!/usr/bin/env bash
# Things a local user plants where `lanecast daemon` (run as root) writes:
# at its directory, DIR/control.sock, DIR/stats, the --prometheus file and
# the --record file: a symbolic link to a victim file, a hard link to it, a
# FIFO, and a file of another user (nobody) - and as the directory itself a
# symbolic link, another user's directory, a group- or world-writable one.
# Each makes the daemon refuse to start, with a message naming the path,
# and the victim keeps its bytes (compared byte for byte) and what was
# planted stays as it was. Then the same daemon starts where nothing was
# planted, and starts again over the leftovers of one killed with SIGKILL
# (its own dead socket and stats file are replaced, not refused).
#
# usage: planted_paths_test.sh path/to/lanecast
set -u
bin=$(realpath "${1:?usage: planted_paths_test.sh lanecast}")
# shellcheck source=tests/security/daemon_net.sh
source "$(dirname "${BASH_SOURCE[0]}")/daemon_net.sh"
daemon_net_skip_unless_root
tag=lcpp$$
daemon_net_up "$tag"
status=0
fail() { echo "FAIL: $*"; status=1; }
chmod 0755 "$work"
victim=$work/victim
victim_dir=$work/victim-dir
n=0

# A fresh victim: a file and a directory with known bytes.
new_victim() {
  rm -f "$victim"
  head -c 4096 /dev/urandom >"$victim"
  cp "$victim" "$work/victim.orig"
  rm -rf "$victim_dir"
  mkdir -m 0755 "$victim_dir"
  cp "$victim" "$victim_dir/inside"
}

# plant KIND PATH: something at PATH a user could have put there.
plant() {
  case $1 in
    symlink) ln -s "$victim" "$2" ;;
    hardlink) ln "$victim" "$2" ;;
    fifo) mkfifo -m 0666 "$2" ;;
    foreign) echo "planted by nobody" >"$2" && chown nobody:nogroup "$2" ;;
    own) echo "left by someone" >"$2" ;;
    dir-symlink) ln -s "$victim_dir" "$2" ;;
    dir-foreign) mkdir -m 0755 "$2" && chown nobody:nogroup "$2" ;;
    dir-world) mkdir "$2" && chmod 0777 "$2" ;;
    dir-group) mkdir "$2" && chmod 0770 "$2" ;;
  esac
}

# try WHAT EXPECT_IN_MESSAGE DAEMON_ARGS...: the daemon must refuse (exit
# non-zero, saying EXPECT) and leave the victim as it was.
try() {
  local what=$1 expect=$2
  shift 2
  local before
  before=$(stat -c '%F %s %Y' "$planted" 2>/dev/null)
  ip netns exec "${tag}n0" timeout 60 "$bin" daemon --config "$work/group.toml" --rank 0 --cores 1 --duration 2 "$@" \
    >"$work/try.out" 2>&1
  local rc=$? failed=$status
  status=0
  if ((rc == 0)); then
    fail "$what: the daemon started (it should have refused)"
  elif ! grep -q -- "$expect" "$work/try.out"; then
    fail "$what: exit $rc without naming '$expect': $(cat "$work/try.out")"
  fi
  cmp -s "$victim" "$work/victim.orig" || fail "$what: the victim file was changed"
  cmp -s "$victim_dir/inside" "$work/victim.orig" || fail "$what: the victim directory was changed"
  [[ $(ls -A "$victim_dir") == inside ]] || fail "$what: something was made in the victim directory"
  [[ $(stat -c '%F %s %Y' "$planted" 2>/dev/null) == "$before" ]] || fail "$what: the planted $planted was changed"
  ((status == 0)) && echo "ok: $what: refused ($(grep -o -- "$expect[^;]*" "$work/try.out" | head -1))"
  ((status |= failed))
}

# DIR itself.
for kind in dir-symlink dir-foreign dir-world dir-group; do
  new_victim
  dir=$work/d$((++n))
  planted=$dir
  plant "$kind" "$dir"
  try "--dir planted as $kind" "$dir" --dir "$dir"
done
# The parents of DIR: one that others may write to (not sticky).
new_victim
mkdir -m 0777 "$work/shared"
chmod 0777 "$work/shared"
planted=$work/shared
try "--dir under a world-writable parent" "writable by others and not sticky" --dir "$work/shared/d"
rmdir "$work/shared"

# Entries in DIR, and the files given by path.
for kind in symlink hardlink fifo foreign; do
  for entry in control.sock stats; do
    new_victim
    dir=$work/d$((++n))
    mkdir -m 0700 "$dir"
    planted=$dir/$entry
    plant "$kind" "$planted"
    try "DIR/$entry planted as $kind" "$planted" --dir "$dir"
  done
  new_victim
  planted=$work/metrics-$n.prom
  plant "$kind" "$planted"
  try "--prometheus planted as $kind" "$planted" --dir "$work/d$((++n))" --prometheus "$planted"
  new_victim
  planted=$work/capture-$n.pcap
  plant "$kind" "$planted"
  try "--record planted as $kind" "$planted" --dir "$work/d$((++n))" --record "$planted"
done
# A capture is never written over, even one of the daemon's own user.
new_victim
planted=$work/old.pcap
plant own "$planted"
try "--record over an existing file" "$planted" --dir "$work/d$((++n))" --record "$planted"

# Nothing planted: it starts, makes its files, and they are its own.
dir=$work/clean
daemon_net_dirs+=("$dir")
daemon_start "$dir" --prometheus "$work/clean.prom" --record "$work/clean.pcap"
daemon_wait "$dir"
sleep 0.5
[[ $(stat -c '%a %U %F' "$dir") == "700 root directory" ]] || fail "DIR is $(stat -c '%a %U %F' "$dir")"
[[ $(stat -c '%a %F' "$dir/control.sock") == "600 socket" ]] || fail "control.sock is $(stat -c '%a %F' "$dir/control.sock")"
[[ $(stat -c '%a %F' "$dir/stats") == "600 regular file" ]] || fail "stats is $(stat -c '%a %F' "$dir/stats")"
[[ -s $work/clean.prom ]] || fail "no Prometheus file"
[[ $(ls -A "$dir" | tr '\n' ' ') == "control.sock stats " ]] || fail "DIR holds $(ls -A "$dir" | tr '\n' ' ')"
[[ -z $(find "$work" -maxdepth 1 -name 'clean.prom.tmp-*') ]] || fail "a Prometheus temporary was left"
# Killed: its socket and stats stay behind, and a new daemon takes them over.
daemon_kill9 "$dir"
[[ -S $dir/control.sock && -f $dir/stats ]] || fail "the killed daemon left no socket and stats to take over"
rm -f "$work/clean.pcap"
daemon_start "$dir" --prometheus "$work/clean.prom" --record "$work/clean.pcap"
daemon_wait "$dir"
"$bin" stat --dir "$dir" --once >/dev/null 2>&1 || fail "stat cannot read the restarted daemon's stats"
daemon_stop
[[ -e $dir/control.sock || -e $dir/stats ]] && fail "the stopped daemon left $(ls -A "$dir")"
((status == 0)) && echo "ok: without plants the daemon starts, makes only its own files, and starts again over its leftovers"
exit $status
