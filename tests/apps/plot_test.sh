#!/usr/bin/env bash
# tools/plot.py on the JSON of real, tiny runs: a 3-member bench, a short
# stream bench, a replay of a small generated capture, and a plan beside the
# bench; each must give a PNG. Bad inputs must give exit 2 and one line of
# message. Skips (77) without matplotlib (tools/test.sh fails on that skip). No timing is
# asserted; every command is bounded by `timeout`.
set -u
bin=${1:?usage: plot_test.sh path/to/lanecast}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
plot=$repo/tools/plot.py
# plot.py runs on Debian's python (its first line), where tools/setup.sh
# installs python3-matplotlib; without that package the test skips, and
# tools/test.sh counts the skip as a failure.
/usr/bin/python3 -c 'import matplotlib' 2>/dev/null ||
  { echo "SKIP: no matplotlib for /usr/bin/python3 (apt-get install python3-matplotlib)"; exit 77; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0 pass=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# run NAME CMD...: a lanecast command whose stdout (its --json) goes to NAME.json.
run() {
  local name=$1
  shift
  if ! timeout 60 nice "$bin" "$@" >"$work/$name.json" 2>"$work/$name.err"; then
    fail "lanecast $* (exit $?):"
    head -5 "$work/$name.err" | sed 's/^/    /'
    return 1
  fi
}

# png NAME INPUTS...: plot.py writes NAME.png, a PNG (signature) of some size.
png() {
  local name=$1 out
  shift
  if ! out=$(timeout 60 "$plot" "$@" -o "$work/$name.png" 2>&1); then
    fail "plot.py $* -> $out"
  elif [[ ! -s $work/$name.png || $(head -c 8 "$work/$name.png" | od -An -tx1 | tr -d ' \n') != 89504e470d0a1a0a ]]; then
    fail "plot.py $*: $name.png is not a PNG"
  else
    echo "ok: $name.png ($(stat -c %s "$work/$name.png") bytes) from $(basename -a "$@" | tr '\n' ' ')"
    pass=$((pass + 1))
  fi
}

# bad WHAT FILE...: exit 2 and one line naming the problem, no traceback.
bad() {
  local what=$1 out rc
  shift
  out=$(timeout 60 "$plot" "$@" -o "$work/bad.png" 2>&1)
  rc=$?
  if [[ $rc -ne 2 || $(wc -l <<<"$out") -ne 1 || $out != plot.py:* || -e $work/bad.png ]]; then
    fail "plot.py on $what -> exit $rc (want 2 and one line):"
    sed 's/^/    /' <<<"$out" | head -10
  else
    echo "ok: $what -> exit 2: $out"
    pass=$((pass + 1))
  fi
}

run bench bench --nodes 3 --algo chain,bintree --sizes 1K,64K --iters 2 --warmup 1 --json &&
  png bench "$work/bench.json"
run stream bench --stream --nodes 3 --sizes 64 --messages 2000 --warmup 200 --json &&
  png stream "$work/stream.json"
run plan plan --algo all --nodes 3 --size 1K,64K --quiet --json &&
  [[ -s $work/bench.json ]] && png compare "$work/plan.json" "$work/bench.json"
if timeout 10 "$bin" replay --help >/dev/null 2>&1; then
  # 300 packets (270 UDP) 1 ms apart: 0.3 s at --speed 1.
  timeout 30 python3 "$repo/tests/replay/make_pcapng.py" "$work/feed.pcapng" --packets 300 --gap-us 1000 >/dev/null ||
    fail "make_pcapng.py"
  run replay replay --pcap "$work/feed.pcapng" --nodes 3 --speed 1 --verify --json &&
    png replay "$work/replay.json"
else
  echo "note: this lanecast has no replay (built without libpcap): its plot is not tried"
fi

echo '{"hello": 1}' >"$work/other.json"
echo '[{"algo": "chain",' >"$work/cut.json"
head -c 200 /dev/urandom >"$work/noise.bin"
bad "a missing file" "$work/missing.json"
bad "invalid JSON" "$work/cut.json"
bad "binary noise" "$work/noise.bin"
bad "JSON of something else" "$work/other.json"
[[ -s $work/plan.json ]] && bad "a plan alone" "$work/plan.json"
[[ -s $work/bench.json && -s $work/stream.json ]] && bad "a bench with a stream" "$work/bench.json" "$work/stream.json"

echo "$pass passed, $fails failed"
[[ $fails -eq 0 ]]
