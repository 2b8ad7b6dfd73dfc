#!/usr/bin/env bash
# The lanecast command on bad input: a clear message and the documented exit
# status, never a crash or a hang. Each case is bounded by `timeout`.
set -u
bin=${1:?usage: cli_test.sh path/to/lanecast}
fails=0
pass=0

# expect STATUS PATTERN ARGS...: exit status STATUS and stderr/stdout matching PATTERN.
expect() {
  local want=$1 pattern=$2
  shift 2
  local out rc
  out=$(timeout 60 "$bin" "$@" 2>&1)
  rc=$?
  if [[ $rc -ne $want ]] || ! grep -qE -- "$pattern" <<<"$out"; then
    echo "FAIL: lanecast $* -> exit $rc (want $want), output:"
    sed 's/^/    /' <<<"$out" | head -20
    fails=$((fails + 1))
  else
    pass=$((pass + 1))
  fi
}

expect 2 "usage: lanecast"                         # no command
expect 0 "commands:" --help
expect 2 "unknown command 'frobnicate'" frobnicate
expect 0 "--nodes N.*default: 8" bench --help
expect 0 "--loss FRACTION" bench --help
expect 2 "unknown option --bogus" bench --bogus
expect 2 "--nodes: 'x' is not a whole number" bench --nodes x
expect 2 "--nodes must be at least 1" bench --nodes 0
expect 2 "larger than 1024" bench --nodes 5000
expect 2 "--root 8 is outside the group of 8" bench --root 8
expect 2 "unknown algorithm 'nope'" bench --algo nope
expect 2 "--sizes" bench --sizes 1Q
expect 2 "--sizes" bench --sizes 16M:1K
expect 2 "at most 4G per message" bench --sizes 64G
expect 2 "more than half of this machine" bench --sizes 4G --nodes 64
expect 2 "--loss" bench --loss 1.5
expect 2 "--loss: 'abc' is not a number" bench --loss abc
expect 2 "--segment" bench --segment 0
expect 2 "--segment" bench --segment 100000
expect 2 "needs a value" bench --iters
expect 2 "--window" bench --window 0
expect 2 "--window" bench --window 500
# auto: a rules file with a mistake is refused with its line; a missing file too.
rules=$(mktemp)
trap 'rm -f "$rules"' EXIT
printf 'size < 1K -> chain\nalways -> nope\n' >"$rules"
expect 2 "$rules:2: unknown algorithm 'nope'" bench --algo auto --auto-rules "$rules" --sizes 1K
expect 2 "auto rules: cannot read /nonexistent" bench --algo auto --auto-rules /nonexistent --sizes 1K
expect 0 '"chosen": "linear"' bench --algo auto --nodes 3 --sizes 1K --iters 1 --warmup 0 --json
expect 0 "order form" plan --algo hypercube --nodes 16 --size 64K --order form \
  --topology "$(dirname "$0")/../../config/topologies/islands4.topo"
# A tiny real run still works and is verified.
expect 0 "verified" bench --nodes 3 --sizes 1,1K --iters 2 --warmup 0
expect 0 '"verified": true' bench --nodes 2 --sizes 100 --iters 1 --warmup 0 --json

echo "cli: $pass passed, $fails failed"
[[ $fails -eq 0 ]]
