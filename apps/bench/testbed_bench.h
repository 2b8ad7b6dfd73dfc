// `lanecast bench --testbed N`: the bench with one member process per node of
// a shaped testbed built for the run. Brings the testbed up, writes the group
// file, starts `lanecast bench --config F --rank I` in every node's namespace,
// streams rank 0's table, shows what the links counted next to the payload
// every receiver must get, and removes everything on every way out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "apps/bench/bench_group.h"
#include "apps/testbed/member_group_file.h"
#include "apps/testbed/testbed_spec.h"

namespace lanecast::apps {

struct TestbedBenchConfig : MemberSchedule {
  testbed::TestbedSpec testbed;  // nodes, lanes, rate, MTU; the name is made per run
  bool xdp = false;              // af_xdp ports instead of af_packet
  std::string sizes_text;        // as given, for the members' command lines
  double peer_timeout_ms = 3000;
  uint32_t window = 0, segment = 0;  // 0: the group file's defaults
  double port_rate_mbit = -1;    // pacing per lane; < 0: the links' rate
  uint32_t port_overhead = 0;    // tbf counts the frame alone
  bool rate_control = false;     // the members find the rate (port_rate_mbit < 0: not told it)
  double deadline_s = 0;         // 0: from the schedule (schedule_bound_s)
  testbed::MulticastSettings mcast;
  uint32_t stream_fanout = 0, stream_window = 0;  // --stream: the group file's (0: defaults)
  uint64_t stream_window_bytes = 0;
  bool stream_multicast = false;
  std::string key_file;  // the group's secret, written into the member group file
  // Another lanecast command for the members instead of bench (`lanecast
  // replay --testbed`): its arguments, to which "--config F --rank I" is
  // added; and the payload each receiver must get, as that command knows it.
  std::vector<std::string> member_command;
  uint64_t payload_bytes = 0;
  std::string payload_how;
};

// A testbed's link rate given as --rate: whole Mbit/s, 1 or more (tbf's
// rate); throws UsageError otherwise.
uint32_t testbed_rate_mbit(double rate_mbit);

// Seconds the whole run may take: start-up, then every broadcast of the
// schedule at worst (N-1) copies of the message through the root's link,
// twice over, and a failure's detection.
double schedule_bound_s(const TestbedBenchConfig& c);

// Exit status: 0 every member verified everything, 1 a member failed (named
// on stderr with its error lines), 2 bad usage, 3 the testbed could not be
// built; Stopped (128 + signal) when interrupted.
int bench_testbed(const TestbedBenchConfig& c);

}  // namespace lanecast::apps
