// `lanecast replay --pcap FILE`: a capture's packets as one stream's
// messages to every member, paced against absolute time, the send-time
// error against the schedule measured, every member's deliveries checked
// against the file and, on request, recorded to pcap.
//
// The file is read twice and never held: once before the clock starts (to
// check it and size the run), then as the schedule needs it, through a
// read-ahead ring (apps/replay/read_ahead.h). In process (--nodes N, the
// default: replay_in_process.cc) the members check on their polling cores;
// as a member of a configured group (--config FILE --rank R:
// replay_member.cc) the publisher replays and every member checks what it
// takes with next(); --testbed N runs such members in namespaces.
#include "apps/replay/replay_command.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "apps/bench/testbed_bench.h"
#include "apps/common/options.h"
#include "apps/replay/replay_config.h"
#include "apps/replay/replay_options.h"

namespace lanecast::apps {
namespace {

using replay::Timing;

// --testbed N: the members are `lanecast replay --config F --rank I`
// processes in the namespaces of a testbed built for the run (the bench's
// testbed machinery: apps/bench/testbed_bench.h).
int replay_testbed(const ReplayConfig& c, const OptionTable& table, const replay::CaptureSummary& src) {
  for (const char* o : {"nodes", "config", "rank", "json", "window-bytes"})
    if (table.given(o)) throw UsageError("--" + std::string(o) + " does not apply to --testbed");
  TestbedBenchConfig t;
  t.testbed.nodes = c.testbed_nodes;
  t.testbed.mtu = c.mtu;
  if (table.given("rate")) t.testbed.rate_mbit = testbed_rate_mbit(c.rate_mbit);
  testbed::check(t.testbed);
  if (c.publisher >= c.testbed_nodes) throw UsageError("--publisher is outside the testbed's members");
  t.sizes = {std::max<uint64_t>(1, src.largest)};
  t.root = c.publisher;
  char buf[PATH_MAX];
  const std::string pcap = ::realpath(c.pcap.c_str(), buf) ? buf : c.pcap;
  t.member_command = {"replay", "--pcap", pcap, "--publisher", std::to_string(c.publisher), "--loop",
                      std::to_string(c.loops), "--read-ahead", std::to_string(c.read_ahead)};
  switch (c.timing.kind) {
    case Timing::Speed: t.member_command.insert(t.member_command.end(), {"--speed", std::to_string(c.timing.value)}); break;
    case Timing::TopSpeed: t.member_command.push_back("--topspeed"); break;
    case Timing::Pps: t.member_command.insert(t.member_command.end(), {"--pps", std::to_string(c.timing.value)}); break;
    case Timing::Mbps: t.member_command.insert(t.member_command.end(), {"--mbps", std::to_string(c.timing.value)}); break;
  }
  if (c.whole_frame) t.member_command.push_back("--whole-frame");
  if (!c.filter.empty()) t.member_command.insert(t.member_command.end(), {"--filter", c.filter});
  if (c.verify) t.member_command.push_back("--verify");
  if (!c.link.empty()) t.member_command.insert(t.member_command.end(), {"--link", c.link});
  if (!c.record.empty()) {
    if (::mkdir(c.record.c_str(), 0755) != 0 && errno != EEXIST)
      throw std::runtime_error("--record " + c.record + ": " + std::strerror(errno));
    const std::string dir = ::realpath(c.record.c_str(), buf) ? buf : c.record;
    t.member_command.insert(t.member_command.end(), {"--record", dir});
  }
  if (c.counters) t.member_command.push_back("--counters");
  const double schedule_s = static_cast<double>(src.schedule_ns) / 1e9;
  t.deadline_s = 90 + static_cast<double>(c.loops) * (schedule_s + static_cast<double>(src.bytes) * 8 /
                                                                      (t.testbed.rate_mbit * 1e6) * c.testbed_nodes);
  t.payload_bytes = c.loops * src.bytes;
  t.payload_how = std::to_string(c.loops) + " x " + std::to_string(src.messages) + " messages of " + c.pcap;
  return bench_testbed(t);
}

}  // namespace

int replay_main(int argc, char** argv) {
  ReplayConfig c;
  int timing_given = 0;
  OptionTable table = make_replay_table(c, timing_given);
  if (table.parse(argc, argv, 1)) {
    std::fputs(kReplayUsage, stdout);
    std::fputs(table.help().c_str(), stdout);
    return 0;
  }
  if (c.pcap.empty()) throw UsageError("--pcap FILE is required (see lanecast replay --help)");
  if (timing_given > 1) throw UsageError("--speed, --topspeed, --pps and --mbps: one at most");
  if (c.nodes == 0) throw UsageError("--nodes must be at least 1");
  if (!c.config.empty() && table.given("nodes")) throw UsageError("--nodes does not apply to --config (the group file says)");
  if (c.config.empty() && !table.given("testbed") && c.publisher >= c.nodes)
    throw UsageError("--publisher " + std::to_string(c.publisher) + " is outside the group of " + std::to_string(c.nodes));
  // A first pass: the file checked whole, and the run sized, before any clock starts.
  const replay::CaptureSummary src = replay::scan_capture(c.capture(), c.timing);
  if (src.messages == 0)
    throw std::runtime_error("--pcap " + c.pcap + ": no packet to replay (" + std::to_string(src.counts.read) +
                             " read, none a message)");
  if (!c.config.empty()) return replay_member(c, src);
  if (table.given("testbed")) return replay_testbed(c, table, src);
  return replay_in_process(c, src);
}

}  // namespace lanecast::apps
