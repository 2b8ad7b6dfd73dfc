#!/usr/bin/env bash
# The shaped testbed of namespaces, for the scripts that build one
# (tests/bench/*.sh): `lanecast testbed`, which builds, lists and removes it
# (lanecast testbed --help describes it). One implementation: this only finds
# the binary - $LANECAST, or build/apps/lanecast of this checkout.
#
# usage: tools/testbed.sh up N [--lanes 1|2] [--rate MBIT] [--mtu M] [--name NAME]
#        tools/testbed.sh down [--name NAME]
#        tools/testbed.sh status [--name NAME]
set -euo pipefail
lanecast=${LANECAST:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build/apps/lanecast}
[[ -x $lanecast ]] || { echo "testbed.sh: $lanecast is missing: build it first (tools/setup.sh)" >&2; exit 2; }
exec "$lanecast" testbed "$@"
