// What `bench --testbed` prints once its members ended: what every link's
// tbf counted beside the payload each receiver had to get, and which members
// failed and what they said.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "apps/bench/member_processes.h"
#include "apps/testbed/tc_counters.h"
#include "apps/testbed/testbed_spec.h"

namespace lanecast::apps {

// The tbf counters of every node's and the switch's links (not the probe's).
std::vector<testbed::QdiscCounters> snapshot_links(const testbed::TestbedSpec& t);

struct Payload {
  uint64_t bytes = 0;  // each receiver's, over the whole run
  std::string how;     // "2 algos x 12 broadcasts x (2 + 64K)"
};

// Per node and lane: bytes, packets, drops and overlimits of its uplink (the
// node's end) and its downlink (the switch's port), during the run, and the
// downlink's bytes over the payload.
void print_link_counters(const testbed::TestbedSpec& t, bool xdp, uint32_t root,
                         const std::vector<testbed::QdiscCounters>& before,
                         const std::vector<testbed::QdiscCounters>& after, const Payload& payload);

// A member's own error lines (those its stderr starts with "lanecast"; else
// its last lines), joined by " / "; "" when it wrote none.
std::string error_lines(const MemberProcesses::Member& m);

}  // namespace lanecast::apps
