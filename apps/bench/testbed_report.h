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

// One node's lane during the run: what its uplink (the node's end) and its
// downlink (the switch's port) counted.
struct LinkRow {
  uint32_t rank;
  std::string lane;  // v0, w0
  testbed::QdiscCounters up, down;
};
std::vector<LinkRow> link_rows(const testbed::TestbedSpec& t, const std::vector<testbed::QdiscCounters>& before,
                               const std::vector<testbed::QdiscCounters>& after);
// What the root's uplinks carried, and the drops on every link.
struct LinkTotals {
  uint64_t root_up_bytes = 0, drops = 0;
};
LinkTotals link_totals(const std::vector<LinkRow>& links, uint32_t root);

// Per node and lane: bytes, packets, drops and overlimits of its uplink and
// its downlink, and the downlink's bytes over the payload.
void print_link_counters(const std::vector<LinkRow>& links, bool xdp, uint32_t root, const Payload& payload);

// `bench --testbed --json`: one object - the testbed, rank 0's results (its
// JSON array as it printed it, or null when it printed none that is whole),
// the payload, every link's counters, and why the run failed ("" if not).
struct TestbedJson {
  const testbed::TestbedSpec* testbed;
  double paced_mbit;      // each lane's pacing (0: none)
  std::string results;    // rank 0's stdout
  Payload payload;
  std::vector<LinkRow> links;
  uint32_t root;
  std::string failed;
};
void print_testbed_json(const TestbedJson& j);

// A member's own error lines (those its stderr starts with "lanecast"; else
// its last lines; notices never), joined by " / "; "" when it wrote none.
std::string error_lines(const MemberProcesses::Member& m);

}  // namespace lanecast::apps
