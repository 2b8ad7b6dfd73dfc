#!/usr/bin/env bash
# What `meson install` gives a user: the program, its man pages (made from
# --help at build time), bash completion and the daemon's systemd unit
# (naming the installed program). Installs the build into a
# temporary DESTDIR, reads `man lanecast-replay` from it, and completes as bash
# does (the completion function called with COMP_WORDS and COMP_CWORD set).
set -u
build=${1:?usage: install_test.sh BUILD_DIR}
fails=0
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

if ! meson install -C "$build" --no-rebuild --quiet --destdir "$dest" >"$dest/install.log" 2>&1; then
  sed 's/^/    /' "$dest/install.log" | tail -20
  fail "meson install"
  exit 1
fi
prefix=$(meson introspect "$build" --buildoptions | python3 -c \
  'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"))')
root=$dest$prefix
bin=$root/bin/lanecast
[[ -x $bin ]] || fail "no $bin"

# Man pages: every command's, readable by man, named after the command.
if ! command -v help2man >/dev/null; then
  fail "help2man is missing (tools/setup.sh installs it): no man pages were made"
else
  for cmd in bench run plan daemon stat replay record key testbed; do
    [[ -f $root/share/man/man1/lanecast-$cmd.1 ]] || fail "no man page lanecast-$cmd.1"
  done
  page=$(MANPATH=$root/share/man MANPAGER=cat MANWIDTH=100 man lanecast-replay 2>&1)
  grep -q "^LANECAST-REPLAY(1)" <<<"$page" || fail "man lanecast-replay: no title: $(head -3 <<<"$page")"
  grep -q -- "--pcap FILE" <<<"$page" || fail "man lanecast-replay: the options are missing"
  grep -q "lanecast 0\." <<<"$page" || fail "man lanecast-replay: no version"
fi

# Completion: the function bash calls on TAB, with the words typed so far.
completion=$root/share/bash-completion/completions/lanecast
[[ -f $completion ]] || fail "no $completion"
touch "$dest/capture.pcap"
complete_words() {  # complete_words WORD...: what TAB offers after the last word
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _lanecast
           ((${#COMPREPLY[@]} == 0)) || printf "%s\n" "${COMPREPLY[@]}"' \
    _ "$completion" "$@" 2>&1 | sort | tr '\n' ' '
}
expect_completion() {  # expect_completion "WANT" WORD...
  local want=$1
  shift
  local got
  got=$(complete_words "$@")
  [[ $got == "$want" ]] || fail "lanecast ${*:2}<TAB> offered '$got', want '$want'"
}
expect_completion "record replay " "$bin" re
expect_completion "testbed " "$bin" te
expect_completion "--pcap " "$bin" replay --pc
expect_completion "calls cores " "$bin" bench --progress ""
expect_completion "--help down status up " "$bin" testbed ""
expect_completion "$dest/capture.pcap " "$bin" replay --pcap "$dest/cap"
expect_completion "--no-validate --node-fit --nodes " "$bin" plan --no
# A value with nothing to offer completes to nothing, not to options.
expect_completion "" "$bin" bench --nodes ""

# The daemon's unit, where systemd finds it, running the program installed.
unit=$root/lib/systemd/system/lanecast-daemon@.service
if [[ ! -f $unit ]]; then
  fail "no $unit"
elif ! grep -q "' $prefix/bin/lanecast %i\$" "$unit"; then
  fail "the unit's ExecStart does not run $prefix/bin/lanecast: $(grep -A3 '^ExecStart=' "$unit")"
fi

if ((fails)); then
  echo "man_and_completion: $fails failed"
  exit 1
fi
echo "man_and_completion: man pages, completion and the daemon's unit as installed"
