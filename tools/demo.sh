#!/usr/bin/env bash
# README command 1: set up, build, and run the main job on the embedded
# default: an 8-node broadcast benchmark on the in-process fabric.
# Extra arguments go to `lanecast bench` (e.g. --algo all --sizes 1:1M).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
tools/setup.sh >build-setup.log 2>&1 || { cat build-setup.log; exit 1; }
exec build/apps/lanecast bench --nodes 8 --algo all --sizes 1:16M --iters 5 --warmup 1 "$@"
