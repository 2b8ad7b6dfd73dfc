#!/usr/bin/env bash
# README command 1: set up, build, and run the main job on the embedded
# default - an 8-member broadcast benchmark of every algorithm on the
# in-process fabric - then say what it found: per size, the best algorithm,
# its MB/s and share of the link, and the worst (tools/bench_summary.py),
# and plot bandwidth against size into build/demo.svg (with matplotlib).
# The whole tables are in build/demo.json. Extra arguments go to `lanecast
# bench` (e.g. --sizes 1:1M --iters 10).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
tools/setup.sh >build-setup.log 2>&1 || { cat build-setup.log; exit 1; }
echo "# lanecast bench --nodes 8 --algo all --sizes 1:16M (build/demo.json) ..."
status=0
build/apps/lanecast bench --nodes 8 --algo all --sizes 1:16M --iters 5 --warmup 1 "$@" --json >build/demo.json || status=$?
tools/bench_summary.py build/demo.json --plot build/demo.svg || status=1
exit $status
