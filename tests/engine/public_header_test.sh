#!/usr/bin/env bash
# The public API stands alone: lanecast/lanecast.h and the public headers it
# includes name no header of the engine's or the algorithms' internals, so an
# application compiles against them without the engine's sources beside them.
# (public_header_use.cc, compiled by the build, includes lanecast.h alone.)
#
# usage: public_header_test.sh SOURCE_ROOT
root=${1:?usage: public_header_test.sh SOURCE_ROOT}
public=(lanecast/lanecast.h lanecast/group_spec.h lanecast/counters.h)
status=0
for h in "${public[@]}"; do
  while IFS= read -r inc; do
    ok=0
    for p in "${public[@]}"; do [[ $inc == "$p" ]] && ok=1; done
    if ((!ok)); then
      echo "FAIL: $h includes \"$inc\", which is not a public header"
      status=1
    fi
  done < <(sed -n 's/^#include "\(.*\)"/\1/p' "$root/include/$h")
done
# The example application, the model of a user's program, includes nothing else.
others=$(grep '^#include "' "$root/apps/examples/join_and_broadcast.cc" | grep -v '"lanecast/lanecast.h"')
[[ -z $others ]] || { echo "FAIL: the example includes $others"; status=1; }
((status == 0)) && echo "public headers: only ${public[*]}"
exit $status
