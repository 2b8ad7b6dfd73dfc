// `lanecast bench`'s options: what the command line sets (BenchConfig), the
// option table that parses and documents it, and the usage text. The
// runners (bench_in_process.h, bench_group.h, testbed_bench.h) take what
// they need of it; bench_command.cc checks which options apply to which mode.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "apps/bench/multicast_text.h"
#include "apps/common/options.h"
#include "apps/testbed/testbed_spec.h"
#include "lanecast/lanecast.h"

namespace lanecast::apps {

struct BenchConfig {
  uint32_t nodes = 8;
  std::string algo = "chain";
  std::vector<uint64_t> sizes = parse_size_list("1:16M", "--sizes");
  uint32_t iters = 10;
  uint32_t warmup = 2;
  uint32_t root = 0;
  uint32_t segment = 0;  // from the link
  double rate_mbit = 10'000;
  double latency_us = 0;
  double loss = 0;
  uint64_t seed = 1;
  uint32_t cores = 0;
  bool progress_in_calls = false;
  uint32_t window = 128;
  uint16_t lanes = 1;
  double timeout_ms = 3000;
  bool json = false;
  bool quiet = false;  // no progress lines on stderr
  bool counters = false;
  std::vector<std::string> ports;
  double port_rate_mbit = 0;
  uint32_t port_overhead = 24;
  bool rate_control = false;  // each lane finds its rate (a --port-rate is its ceiling)
  bool no_rate_control = false;  // --ports with no --port-rate: unpaced, not found
  std::string auto_rules;
  std::string topology;
  bool memory = false;
  std::string config;      // one member per process: the group file
  std::optional<uint32_t> rank;  // and this process's rank in it (pmix: the launcher's)
  bool yield_when_idle = false;
  std::string sizes_text = "1:16M";  // as given: member processes get it
  uint32_t testbed_nodes = 0;        // --testbed N: a member process per namespace
  uint32_t mtu = 1500;
  uint32_t uplink_queue = testbed::kUplinkQueueFrames;  // --testbed: frames a node's uplink queues (0: 5 ms)
  bool xdp = false;
  double deadline_s = 0;
  testbed::MulticastSettings mcast;
  bool stream = false;             // --stream: a stream of messages, not broadcasts
  uint64_t messages = 1'000'000;
  double msg_rate = 0;
  uint32_t fanout = 0;
  uint32_t stream_window = 1024;
  uint64_t stream_window_bytes = 4u << 20;
  bool stream_multicast = false;  // --stream-multicast
  std::string key_file;  // --key-file: the group's secret
  FaultOptions faults;  // --faults: injected on every member's port
};

OptionTable make_bench_table(BenchConfig& c);
extern const char* const kBenchUsage;
// --algo's list ("chain", "chain,bintree,auto", "all"), each checked.
std::vector<std::string> bench_algos(const std::string& list);

// Whether the members' lanes find their rate: asked to (--rate-control), or
// real ports told no rate (--ports, no --port-rate: a user does not know the
// bottleneck's rate) unless --no-rate-control. The in-process fabric has no
// link to find.
inline bool finds_rate(const BenchConfig& c) {
  return c.rate_control || (!c.ports.empty() && c.port_rate_mbit == 0 && !c.no_rate_control);
}

}  // namespace lanecast::apps
