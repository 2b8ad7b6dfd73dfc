#!/usr/bin/env bash
# lanecast replay's send-time error at --speed 1 (8 members in process, a
# pcapng of UDP datagrams GAP us apart), next to the yardstick measured in the
# same run: a bare thread (tests/bench/schedule_probe) waiting for the same
# schedule on the same CPU - how punctual anything can be on this machine.
# file_waits: messages the read-ahead ring did not hold yet at their turn.
#
# usage: tests/bench/replay_timing.sh [--gaps "150 1000"] [--packets 5000] [--runs 3] [--nodes 8]
#          [--lanecast PATH] [--args "REPLAY ARGS"]
#   --packets 40000 makes a file larger than the read-ahead ring (the reader
#   then runs throughout); --args "--read-ahead 64K" makes it run all the
#   time; --lanecast compares another build (e.g. one from before a change).
set -euo pipefail
gaps="150 1000" packets=5000 runs=3 nodes=8 args=""
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
lanecast=$repo/build/apps/lanecast probe=$repo/build/tests/bench/schedule_probe
while (($#)); do
  case $1 in
    --gaps) gaps=$2; shift ;;
    --packets) packets=$2; shift ;;
    --runs) runs=$2; shift ;;
    --nodes) nodes=$2; shift ;;
    --lanecast) lanecast=$(realpath "$2"); shift ;;
    --args) args=$2; shift ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "replay_timing: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
[[ -x $lanecast && -x $probe ]] || { echo "replay_timing: build first (tools/setup.sh)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '%8s %4s %-36s %10s %10s %10s %10s %9s\n' gap_us run what p50_us p99_us max_us file_waits verified
for gap in $gaps; do
  python3 "$repo/tests/replay/make_pcapng.py" "$work/p.pcapng" --packets "$packets" --gap-us "$gap"
  for ((r = 1; r <= runs; r++)); do
    # shellcheck disable=SC2086
    out=$("$lanecast" replay --pcap "$work/p.pcapng" --nodes "$nodes" --speed 1 --verify --json $args)
    cpu=$("$lanecast" replay --pcap "$work/p.pcapng" --nodes 1 --topspeed 2>/dev/null | sed -n 's/.*thread on CPU \([0-9,]*\).*/\1/p' | cut -d, -f1)
    python3 -c '
import json, sys
g, r, n = sys.argv[1:4]
d = json.loads(sys.stdin.read())
print("%8s %4s %-36s %10.1f %10.1f %10.1f %10s %9s" % (g, r, "lanecast replay, " + n + " members", d["send_error_p50_us"],
      d["send_error_p99_us"], d["send_error_max_us"], d.get("file_waits", "-"), "yes" if d["verified"] else "NO"))
' "$gap" "$r" "$nodes" <<<"$out"
    "$probe" --cpu "${cpu:-1}" --gap-us "$gap" --count "$packets" |
      awk -v g="$gap" -v r="$r" -v c="${cpu:-1}" '{ for (i = 1; i <= NF; i++) { if ($i == "p50") p50 = $(i + 1); if ($i == "p99") p99 = $(i + 1); if ($i == "max") mx = $(i + 1) }
        printf "%8s %4s %-36s %10.1f %10.1f %10.1f %10s %9s\n", g, r, "bare thread on CPU " c " (yardstick)", p50, p99, mx, "-", "-" }'
  done
done
