// `lanecast bench`: parses the options (bench_options.h), checks which
// apply to the mode asked, and hands the run to its runner - in process
// (bench_in_process.h), one member per process from a group file
// (bench_group.h), or a member process per namespace of a testbed
// (testbed_bench.h).
#include "apps/bench/bench_command.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "algos/registry.h"
#include "apps/bench/bench_group.h"
#include "apps/bench/bench_in_process.h"
#include "apps/bench/bench_options.h"
#include "apps/bench/testbed_bench.h"
#include "apps/common/fault_text.h"
#include "apps/common/options.h"

namespace lanecast::apps {
namespace {

// What every member process runs, from the options (--config and --testbed alike).
MemberSchedule schedule_of(const BenchConfig& c, const std::vector<std::string>& algos) {
  MemberSchedule m;
  m.algos = algos;
  m.sizes = c.sizes;
  m.iters = c.iters;
  m.warmup = c.warmup;
  m.root = c.root;
  m.seed = c.seed;
  m.cores = c.cores;
  m.progress_in_calls = c.progress_in_calls;
  m.counters = c.counters;
  m.json = c.json;
  m.quiet = c.quiet;
  m.auto_rules = c.auto_rules;
  m.stream = c.stream;
  m.stream_messages = c.messages;
  m.msg_rate = c.msg_rate;
  return m;
}

// --testbed: what the members and their testbed take of the options; the
// options of the in-process fabric and of --config do not apply.
TestbedBenchConfig testbed_config(const BenchConfig& c, const OptionTable& table, const std::vector<std::string>& algos) {
  for (const char* o : {"nodes", "ports", "loss", "latency", "topology", "config", "rank", "memory", "faults"})
    if (table.given(o)) throw UsageError("--" + std::string(o) + " does not apply to --testbed");
  TestbedBenchConfig t;
  t.testbed.nodes = c.testbed_nodes;
  t.testbed.lanes = c.lanes;
  t.testbed.mtu = c.mtu;
  t.testbed.uplink_queue = c.uplink_queue;
  if (table.given("rate")) t.testbed.rate_mbit = testbed_rate_mbit(c.rate_mbit);
  testbed::check(t.testbed);
  static_cast<MemberSchedule&>(t) = schedule_of(c, algos);
  // Many member processes on this host's few CPUs: one thread each (2 B on
  // 8 namespaces and 2 CPUs: span 189 -> 122 us; large messages alike).
  if (!table.given("progress")) t.progress_in_calls = true;
  t.xdp = c.xdp;
  t.sizes_text = c.sizes_text;
  t.peer_timeout_ms = c.timeout_ms;
  t.window = table.given("window") ? c.window : 0;
  if (c.segment != 0 && (c.segment < 64 || c.segment > 9000))
    throw UsageError("--segment with --testbed: 64..9000 bytes or auto (a group file's segment)");
  t.segment = c.segment;
  t.port_rate_mbit = table.given("port-rate") ? c.port_rate_mbit : -1;
  t.port_overhead = table.given("port-overhead") ? c.port_overhead : 0;
  t.rate_control = c.rate_control;
  t.deadline_s = c.deadline_s;
  t.mcast = c.mcast;
  t.stream_fanout = c.fanout;
  t.stream_window = table.given("stream-window") ? c.stream_window : 0;
  t.stream_window_bytes = table.given("stream-window-bytes") ? c.stream_window_bytes : 0;
  t.stream_multicast = c.stream_multicast;
  if (!c.key_file.empty()) {
    AuthKey::from_file(c.key_file);  // refused here, not in every member
    t.key_file = std::filesystem::absolute(c.key_file).string();
  }
  return t;
}

}  // namespace

int bench_main(int argc, char** argv) {
  BenchConfig c;
  OptionTable table = make_bench_table(c);
  if (table.parse(argc, argv, 1)) {
    std::cout << kBenchUsage << "options:\n" << table.help() << "\nfaults (--faults KEY=VALUE,...):\n" << fault_text_help()
              << "\nalgorithms:\n";
    for (const auto& a : algos::algorithms())
      std::cout << "  " << a.name << std::string(a.name.size() < 22 ? 22 - a.name.size() : 1, ' ')
                << a.summary << "\n";
    return 0;
  }
  if (!c.ports.empty()) c.nodes = static_cast<uint32_t>(c.ports.size());
  c.mcast.loss_seed = c.seed;  // --mcast-loss draws from --seed, whatever their order
  const std::vector<std::string> algos_to_run = bench_algos(c.algo);
  if (c.stream) {
    if (!table.given("sizes")) c.sizes = {64};
    if (!table.given("warmup")) c.warmup = 10'000;
  } else {
    for (const char* o : {"messages", "msg-rate", "fanout", "stream-window", "stream-window-bytes", "stream-multicast"})
      if (table.given(o)) throw UsageError("--" + std::string(o) + " applies to --stream only");
  }
  if (c.json && c.counters && (table.given("testbed") || !c.config.empty() || c.rank))
    throw UsageError("--counters prints every member's counters as text: with --config or --testbed, leave out --json "
                     "to see them");
  if (c.no_rate_control) {
    if (c.rate_control) throw UsageError("--rate-control and --no-rate-control: choose one");
    if (c.ports.empty() || c.port_rate_mbit > 0)
      throw UsageError("--no-rate-control applies to --ports with no --port-rate (the lanes then send as fast as the "
                       "ports take frames, instead of finding the rate)");
  }
  if (table.given("testbed")) return bench_testbed(testbed_config(c, table, algos_to_run));
  for (const char* o : {"mtu", "uplink-queue", "xdp", "deadline"})
    if (table.given(o)) throw UsageError("--" + std::string(o) + " applies to --testbed only");
  if (!c.config.empty() || c.rank) {
    if (c.config.empty()) throw UsageError("--rank R needs --config FILE");
    if (!c.ports.empty()) throw UsageError("--config takes the members' ports from the group file, not --ports");
    if (!c.key_file.empty())
      throw UsageError("--key-file with --config: every member must hold the key, so the group file's key_file "
                       "(or LANECAST_GROUP_KEY_FILE) gives it (docs/security.md)");
    for (const char* o : {"multicast", "mcast-root-delay", "mcast-sync-seed", "mcast-repair", "mcast-loss"})
      if (table.given(o))
        throw UsageError("--" + std::string(o) + " with --config: every member must agree, so the group file says it "
                         "(multicast, mcast_root_delay_us, mcast_sync_seed, mcast_repair, mcast_loss; config/groups/README.md)");
    if (table.given("faults"))
      throw UsageError("--faults with --config: the group file says it ([group.faults]; config/groups/README.md)");
    if (c.stream)
      for (const char* o : {"fanout", "stream-window", "stream-window-bytes", "stream-multicast"})
        if (table.given(o))
          throw UsageError("--" + std::string(o) + " with --config: the group file says it (stream_fanout, "
                           "stream_window, stream_window_bytes, stream_multicast; config/groups/README.md)");
    GroupBenchConfig gc;
    static_cast<MemberSchedule&>(gc) = schedule_of(c, algos_to_run);
    gc.config = c.config;
    gc.rank = c.rank;
    gc.yield_when_idle = c.yield_when_idle;
    return bench_group(gc);
  }
  return bench_in_process(c, table, algos_to_run);
}

}  // namespace lanecast::apps
