#!/usr/bin/env bash
# The full soak: 100 000 broadcasts of 1 B to 1 MiB over every algorithm and
# a stream of 1 000 000 messages beside them, on 8 members in one process on
# the fabric, under 5% loss, 2% reordering, 1% duplication and 0.5%
# corruption of every frame received (tests/bench/soak.cc says what it
# checks). Prints the soak's report and its wall and CPU time.
# Runs under /tmp/lanecast-net.lock (it measures time: one at a time on a
# shared machine).
#
# usage: tests/bench/soak.sh [SOAK OPTIONS...]   (after tools/setup.sh; e.g. --seed 3,
#        --broadcasts 10000, --faults 'loss=0.1', --stream-messages 0; --help lists them)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
soak=${SOAK:-build/tests/bench/soak}
[[ -x $soak ]] || { echo "build first: tools/setup.sh (or ninja -C build tests/bench/soak)" >&2; exit 2; }
args=(--broadcasts 100000 --stream-messages 1000000 "$@")
echo "# $soak ${args[*]}"
status=0
TIMEFORMAT='wall %R s, user %U s, system %S s'
time flock /tmp/lanecast-net.lock "$soak" "${args[@]}" || status=$?
exit $status
