// Compiled by the build, never run: an application's view of lanecast is
// lanecast/lanecast.h alone, and what it names must be complete there.
#include "lanecast/lanecast.h"

int main() {
  lanecast::Status s;
  s.error = lanecast::ErrorKind::GroupBroken;
  lanecast::GroupSpec spec;
  lanecast::EngineOptions eo;
  eo.progress_in_calls = true;
  lanecast::Completion c;
  return (s.ok() || spec.members.size() > 0 || c.start_ns() > 0 || s.peer != lanecast::kNoRank) ? 1 : 0;
}
