#include "apps/bench/bench_command.h"
#include "apps/bench/bench_group.h"
#include "apps/bench/stream_bench.h"
#include "apps/bench/testbed_bench.h"

#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "algos/registry.h"
#include "apps/common/fault_text.h"
#include "apps/common/group_member.h"
#include "apps/common/options.h"
#include "apps/bench/multicast_text.h"
#include "apps/bench/skew.h"
#include "apps/common/pattern.h"
#include "engine/runtime/clock.h"
#include "engine/group/fault_keys.h"
#include "lanecast/lanecast.h"
#include "engine/api/member_internals.h"

namespace lanecast::apps {
namespace {

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
  bool counters = false;
  std::vector<std::string> ports;
  double port_rate_mbit = 0;
  uint32_t port_overhead = 24;
  std::string auto_rules;
  std::string topology;
  bool memory = false;
  std::string config;      // one member per process: the group file
  std::optional<uint32_t> rank;  // and this process's rank in it (pmix: the launcher's)
  bool yield_when_idle = false;
  std::string sizes_text = "1:16M";  // as given: member processes get it
  uint32_t testbed_nodes = 0;        // --testbed N: a member process per namespace
  uint32_t mtu = 1500;
  bool xdp = false;
  double deadline_s = 0;
  testbed::MulticastSettings mcast;
  bool stream = false;             // --stream: a stream of messages, not broadcasts
  uint64_t messages = 1'000'000;
  double msg_rate = 0;
  uint32_t fanout = 0;
  uint32_t stream_window = 1024;
  uint64_t stream_window_bytes = 4u << 20;
  std::string key_file;  // --key-file: the group's secret
  FaultOptions faults;  // --faults: injected on every member's port
};

struct Row {
  std::string algo;
  std::string chosen;  // what "auto" picked for this size
  uint32_t nodes;
  uint64_t size;
  uint32_t iters;
  // Completion: until the last member holds the message (avg, min, median,
  // 99th percentile, max), its bandwidth, the spread of the members' hold
  // times, and until the root (and every member) also saw every frame
  // acknowledged.
  double avg_us, min_us, p50_us, p99_us, max_us, mbps, spread_us, acked_us;
  bool verified;
  std::string error;
  // Summed over members, for the timed and warm-up broadcasts of this size.
  uint64_t data_frames = 0, retransmits = 0, timeouts = 0, acks = 0, datagrams = 0;
  // Skew: each member's average time from the root's posting to holding the
  // message (the root's 0), and (slowest - fastest) / median of them.
  std::vector<double> rank_us = {};
  double skew = 0;
};

OptionTable make_table(BenchConfig& c) {
  OptionTable t;
  t.add({"nodes", "N", "8", "group size, root included (1..1024)",
         [&](std::string_view v) { c.nodes = static_cast<uint32_t>(parse_uint(v, "--nodes", 1024)); }});
  t.add({"algo", "NAME", "chain",
         "algorithm, 'auto' (chosen per size by rules), a list 'chain,bintree', or 'all' for every one in turn",
         [&](std::string_view v) { c.algo = std::string(v); }});
  t.add({"sizes", "LIST", "1:16M",
         "message sizes: 'a,b,c' and/or 'lo:hi' (powers of two); K/M/G suffixes",
         [&](std::string_view v) {
           c.sizes = parse_size_list(v, "--sizes");
           c.sizes_text = std::string(v);
         }});
  t.add({"iters", "K", "10", "timed broadcasts per size",
         [&](std::string_view v) { c.iters = static_cast<uint32_t>(parse_uint(v, "--iters", 1'000'000)); }});
  t.add({"warmup", "W", "2", "untimed broadcasts per size before the timed ones",
         [&](std::string_view v) { c.warmup = static_cast<uint32_t>(parse_uint(v, "--warmup", 1'000'000)); }});
  t.add({"root", "R", "0", "rank that broadcasts",
         [&](std::string_view v) { c.root = static_cast<uint32_t>(parse_uint(v, "--root", UINT32_MAX)); }});
  t.add({"segment", "BYTES", "auto",
         "payload bytes per frame (1..9000); auto: 1400 on the fabric, from the ports' MTU (at most 8K) on --ports",
         [&](std::string_view v) {
           c.segment = v == "auto" ? 0 : static_cast<uint32_t>(parse_size(v, "--segment"));
           if (v != "auto" && c.segment == 0) throw UsageError("--segment must be 1..9000 bytes or auto");
         }});
  t.add({"rate", "MBIT", "10000", "fabric link rate in Mbit/s; 0 = unlimited (--testbed: the links' tbf rate, default 200)",
         [&](std::string_view v) { c.rate_mbit = parse_double(v, "--rate", 0, 1e7); }});
  t.add({"latency", "US", "0", "fabric one-way link latency in microseconds",
         [&](std::string_view v) { c.latency_us = parse_double(v, "--latency", 0, 1e6); }});
  t.add({"loss", "FRACTION", "0", "random frame loss on every link, in [0, 0.5]",
         [&](std::string_view v) { c.loss = parse_double(v, "--loss", 0, 0.5); }});
  t.add({"seed", "S", "1", "seed of the fabric's loss and of the data pattern",
         [&](std::string_view v) { c.seed = parse_uint(v, "--seed", UINT64_MAX); }});
  t.add({"lanes", "L", "1", "lanes per member: queues of its port, 1..4 (multilane uses 2); --testbed: NICs, a switch each, 1..2",
         [&](std::string_view v) { c.lanes = static_cast<uint16_t>(parse_uint(v, "--lanes", 4)); }});
  t.add({"window", "FRAMES", "128", "frames in flight per peer (1..129)",
         [&](std::string_view v) { c.window = static_cast<uint32_t>(parse_uint(v, "--window", 129)); }});
  t.add({"timeout", "MS", "3000", "a peer silent this long fails the broadcast",
         [&](std::string_view v) { c.timeout_ms = parse_double(v, "--timeout", 1, 3'600'000); }});
  t.add({"cores", "C", "auto",
         "polling cores (default: one per usable CPU but one, at least 1, at most 2: the CPU left carries this "
         "thread and the kernel's work for af_packet/af_xdp ports)",
         [&](std::string_view v) { c.cores = static_cast<uint32_t>(parse_uint(v, "--cores", 64)); }});
  t.add({"progress", "cores|calls", "cores; --testbed: calls",
         "who runs the members: polling cores, or (calls) the bench's thread while it waits, as MPI progresses "
         "inside its calls - one thread per member process instead of two, for many processes on few CPUs "
         "(--config, --testbed)",
         [&](std::string_view v) { c.progress_in_calls = parse_progress(v); }});
  t.add({"ports", "DEVARGS;...", "",
         "one DPDK port per member instead of the fabric, e.g. "
         "'net_af_packet0,iface=v0;net_af_packet1,iface=v1' (sets --nodes)",
         [&](std::string_view v) {
           c.ports.clear();
           while (!v.empty()) {
             const auto semi = v.find(';');
             if (semi != 0) c.ports.emplace_back(v.substr(0, semi));
             v = semi == std::string_view::npos ? std::string_view{} : v.substr(semi + 1);
           }
           if (c.ports.empty()) throw UsageError("--ports: no devargs given");
         }});
  t.add({"port-rate", "MBIT", "0",
         "pace each member's lanes to this rate in Mbit/s (the links' rate, e.g. a tbf's); 0 = off",
         [&](std::string_view v) { c.port_rate_mbit = parse_double(v, "--port-rate", 0, 1e7); }});
  t.add({"port-overhead", "BYTES", "24",
         "bytes the links count per frame beyond it, for --port-rate: 24 on an Ethernet wire, 0 under a Linux tbf",
         [&](std::string_view v) { c.port_overhead = static_cast<uint32_t>(parse_uint(v, "--port-overhead", 1024)); }});
  t.add({"auto-rules", "FILE", "built in", "rules for --algo auto (format: config/auto.rules)",
         [&](std::string_view v) { c.auto_rules = std::string(v); }});
  t.add({"topology", "FILE", "uniform",
         "latency between members (config/topologies/ format): the fabric's delays and auto's spread",
         [&](std::string_view v) { c.topology = std::string(v); }});
  t.add({"config", "FILE", "",
         "one member per process: run as member --rank of the group FILE describes (config/groups/); every "
         "member runs the same command; osu_bcast-style timing",
         [&](std::string_view v) { c.config = std::string(v); }});
  t.add({"rank", "R", "", "with --config: this process's rank (a pmix group: the launcher's, if left out)",
         [&](std::string_view v) { c.rank = static_cast<uint32_t>(parse_uint(v, "--rank", 1023)); }});
  t.add({"yield-when-idle", "", "",
         "idle polling cores yield their CPU: for several member processes on one host's CPUs",
         [&](std::string_view) { c.yield_when_idle = true; }});
  t.add({"testbed", "N", "",
         "one member process in each of N network namespaces, built for the run as `lanecast testbed up N` does "
         "(veths to a bridge per lane, tbf both ways) and removed after it; needs root",
         [&](std::string_view v) { c.testbed_nodes = static_cast<uint32_t>(parse_uint(v, "--testbed", 1'000'000)); }});
  t.add({"mtu", "M", "1500", "with --testbed: the links' MTU (576..9000; --xdp: at most 3500)",
         [&](std::string_view v) { c.mtu = static_cast<uint32_t>(parse_uint(v, "--mtu", 1'000'000)); }});
  t.add({"xdp", "", "",
         "with --testbed: af_xdp ports instead of af_packet (XDP transmit skips the node's qdisc: only the switch "
         "side shapes); mounts bpffs at /sys/fs/bpf if missing",
         [&](std::string_view) { c.xdp = true; }});
  t.add({"deadline", "S", "auto",
         "with --testbed: the members still running after S seconds are killed and the run fails (auto: from the "
         "schedule and the rate)",
         [&](std::string_view v) { c.deadline_s = parse_double(v, "--deadline", 1, 86'400); }});
  t.add({"multicast", "on|off", "on",
         "multicasts as one frame to the group's random address where the ports can join it (else emulated, "
         "said in the header); off: always one datagram per member",
         [&](std::string_view v) {
           if (v != "on" && v != "off") throw UsageError("--multicast: on or off, not '" + std::string(v) + "'");
           c.mcast.enabled = v == "on";
         }});
  t.add({"mcast-root-delay", "US", "0",
         "mcast_chain: the root waits this long before it multicasts (Hoefler, Siebert & Rehm's root delay)",
         [&](std::string_view v) { c.mcast.root_delay_us = parse_double(v, "--mcast-root-delay", 0, 1e6); }});
  t.add({"mcast-sync-seed", "S", "0",
         "mcast_chain: randomized synchronisation - per broadcast one member drawn from S tells the root it "
         "started, and the root multicasts then; 0 = off",
         [&](std::string_view v) { c.mcast.sync_seed = parse_uint(v, "--mcast-sync-seed", UINT64_MAX); }});
  t.add({"mcast-repair", "request|ring", "request",
         "mcast_chain's repair: on request (each member asks its predecessor in the ring for the segments it missed: "
         "every link carries each segment about once) or the paper's ring (every member also sends every segment "
         "on: twice)",
         [&](std::string_view v) {
           if (v != "request" && v != "ring") throw UsageError("--mcast-repair: request or ring, not '" + std::string(v) + "'");
           c.mcast.repair_on_request = v == "request";
         }});
  t.add({"mcast-loss", "FRACTION", "0",
         "every member drops this share of the multicast frames it receives (seeded by --seed), in [0, 0.9]: "
         "the repair stage at work",
         [&](std::string_view v) {
           c.mcast.loss = parse_double(v, "--mcast-loss", 0, 0.9);
         }});
  t.add({"stream", "", "",
         "a stream of messages from --root to every member instead of broadcasts (docs/streams.md): --sizes are "
         "message sizes (default 64), --messages timed ones per size after --warmup ones (default 10000); prints "
         "messages/s and the latency from publish() to delivery on every member",
         [&](std::string_view) { c.stream = true; }});
  t.add({"messages", "M", "1000000", "--stream: timed messages per size",
         [&](std::string_view v) { c.messages = parse_uint(v, "--messages", 1'000'000'000); }});
  t.add({"msg-rate", "PER_S", "0", "--stream: offer this many messages per second, against absolute time (0: as fast as "
         "the window allows)",
         [&](std::string_view v) { c.msg_rate = parse_double(v, "--msg-rate", 0, 1e9); }});
  t.add({"fanout", "K", "auto", "--stream: members each member forwards to (1: chain, 2: binary tree, N-1: linear; "
         "auto: from --algo)",
         [&](std::string_view v) { c.fanout = v == "auto" ? 0 : static_cast<uint32_t>(parse_uint(v, "--fanout", 1023)); }});
  t.add({"stream-window", "FRAMES", "1024", "--stream: frames each member keeps in flight per stream (16..65536)",
         [&](std::string_view v) { c.stream_window = static_cast<uint32_t>(parse_uint(v, "--stream-window", 65536)); }});
  t.add({"stream-window-bytes", "BYTES", "4M", "--stream: bytes published and not yet delivered everywhere",
         [&](std::string_view v) { c.stream_window_bytes = parse_size(v, "--stream-window-bytes"); }});
  t.add({"key-file", "FILE", "",
         "a group key (docs/security.md): every frame sealed, frames that do not open dropped and counted. FILE holds "
         "64 hex digits and only its owner may read it (lanecast key --new FILE makes one). In process: this key; "
         "--testbed: written into every member's group file. With --config the group file's key_file (or "
         "LANECAST_GROUP_KEY_FILE) gives it",
         [&](std::string_view v) { c.key_file = std::string(v); }});
  t.add({"faults", "SPEC", "none",
         "faults injected on the members' ports, e.g. 'loss=0.05,reorder=0.02,dup=0.01,corrupt=0.005,seed=7' "
         "(keys below; ';' between rules): loss, bursts, reordering, duplication, corruption, delay - the protocol "
         "repairs them; counted per member (--counters)",
         [&](std::string_view v) { c.faults = parse_fault_text(v, "--faults"); }});
  t.add({"memory", "", "", "print engine memory per member (state, pools, fabric) and the process's peak RSS",
         [&](std::string_view) { c.memory = true; }});
  t.add({"json", "", "", "print results as a JSON array, one object per (algo, nodes, size)",
         [&](std::string_view) { c.json = true; }});
  t.add({"counters", "", "", "print every node's counters after each algorithm",
         [&](std::string_view) { c.counters = true; }});
  return t;
}

const char* kUsage =
    "usage: lanecast bench [--nodes N] [--algo NAME] [--sizes LIST] [--iters K] [--warmup W]\n"
    "                      [--root R] [--segment BYTES] [--rate MBIT] [--latency US]\n"
    "                      [--loss FRACTION] [--seed S] [--cores C] [--json] [--counters]\n"
    "                      [--ports DEVARGS;...] [--port-rate MBIT] [--memory]\n"
    "       lanecast bench --config FILE [--rank R] [--algo NAME] [--sizes LIST] ...  (one member per process)\n"
    "       lanecast bench --testbed N [--lanes 1|2] [--rate MBIT] [--mtu M] [--xdp] [--algo NAME] ...  (root)\n"
    "\n"
    "Broadcasts messages among N members joined by the in-process fabric (rings and\n"
    "an emulated switch) or by one DPDK port each (--ports), and prints per size the\n"
    "completion time - from posting until the last member holds the message -\n"
    "averaged over K iterations, its minimum and maximum, the bandwidth (size /\n"
    "average time), the spread of the members' hold times, the time until every\n"
    "frame was also acknowledged (acked_us), the frames sent again, and whether\n"
    "every member's bytes equal the root's in every iteration.\n"
    "\n"
    "--testbed N builds a shaped testbed of N namespaces for the run (lanecast\n"
    "testbed --help), starts `lanecast bench --config F --rank I` in each (af_packet\n"
    "ports paced to the links' rate), streams rank 0's table, prints what every\n"
    "link's tbf counted beside the payload each receiver must get, and removes it\n"
    "all - also when a member fails (exit 1, naming the rank and what it said),\n"
    "at the deadline, or on SIGINT/SIGTERM.\n"
    "\n";

uint64_t physical_memory() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
}

// Counters summed over members (for per-size differences).
struct Totals {
  uint64_t data = 0, retransmits = 0, timeouts = 0, acks = 0, datagrams = 0;
};
Totals totals(LocalGroup& g) {
  Totals t;
  for (uint32_t r = 0; r < g.size(); ++r) {
    const auto& k = node_counters(g.member(r));
    t.data += k.tx_data.get();
    t.retransmits += k.tx_retransmits.get();
    t.timeouts += k.rto_timeouts.get();
    t.acks += k.tx_acks.get();
    t.datagrams += k.tx_datagrams.get();
  }
  return t;
}

// The q-quantile of `v` (nearest rank); reorders v.
double percentile(std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  const size_t k = std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

Row run_size(LocalGroup& g, const BenchConfig& c, const std::string& algo, uint64_t size,
             std::vector<std::vector<std::byte>>& bufs) {
  Row row{algo, std::string(algos::algo_info(resolve_algo(g.member(0), algo, size)).name),
          c.nodes, size, c.iters, 0, 0, 0, 0, 0, 0, 0, 0, true, {}};
  const Totals before = totals(g);
  std::vector<Completion> done(c.nodes);
  std::vector<double> times;
  times.reserve(c.iters);
  double sum = 0, spread_sum = 0, acked_sum = 0, mn = 1e300, mx = 0;
  std::vector<double> rank_sum(c.nodes, 0.0);
  for (uint32_t it = 0; it < c.warmup + c.iters; ++it) {
    fill_pattern(std::span(bufs[c.root].data(), size), pattern_seed(c.seed, size, it));
    // The receivers post first and the clock starts when the root posts: as
    // after a barrier, every member is in the broadcast when it starts, and
    // nothing can arrive before the time is taken.
    for (uint32_t r = 0; r < c.nodes; ++r)
      if (r != c.root) done[r] = g.member(r).broadcast(c.root, std::span(bufs[r].data(), size));
    const uint64_t t0 = engine::now_ns();
    done[c.root] = g.member(c.root).broadcast(c.root, std::span(bufs[c.root].data(), size));
    uint64_t first = UINT64_MAX, last = 0, acked = 0;
    for (uint32_t r = 0; r < c.nodes; ++r) {
      Status s = done[r].wait();
      if (!s.ok() && row.error.empty()) row.error = "rank " + std::to_string(r) + ": " + s.message;
      if (r != c.root || c.nodes == 1) {
        first = std::min(first, done[r].held_ns());
        last = std::max(last, done[r].held_ns());
      }
      acked = std::max(acked, done[r].finish_ns());
    }
    if (!row.error.empty()) {
      row.verified = false;
      return row;
    }
    for (uint32_t r = 0; r < c.nodes; ++r)
      if (r != c.root && size > 0 && std::memcmp(bufs[r].data(), bufs[c.root].data(), size) != 0)
        row.verified = false;
    if (it < c.warmup) continue;
    // The polling cores stamp their times on the same clock as t0.
    const double us = static_cast<double>(last > t0 ? last - t0 : 0) / 1e3;
    sum += us;
    spread_sum += static_cast<double>(last - first) / 1e3;
    acked_sum += static_cast<double>(acked > t0 ? acked - t0 : 0) / 1e3;
    mn = std::min(mn, us);
    mx = std::max(mx, us);
    times.push_back(us);
    for (uint32_t r = 0; r < c.nodes; ++r)
      if (r != c.root) rank_sum[r] += static_cast<double>(std::max(done[r].held_ns(), t0) - t0) / 1e3;
  }
  if (c.iters > 0) {
    row.avg_us = sum / c.iters;
    row.min_us = mn;
    row.max_us = mx;
    row.p50_us = percentile(times, 0.50);
    row.p99_us = percentile(times, 0.99);
    row.spread_us = spread_sum / c.iters;
    row.acked_us = acked_sum / c.iters;
    row.mbps = row.avg_us > 0 ? static_cast<double>(size) / row.avg_us : 0;  // bytes/us = MB/s
    for (double& x : rank_sum) x /= c.iters;
    row.rank_us = rank_sum;
    row.skew = skew_of(rank_sum, c.root);
  }
  const Totals after = totals(g);
  row.data_frames = after.data - before.data;
  row.retransmits = after.retransmits - before.retransmits;
  row.timeouts = after.timeouts - before.timeouts;
  row.acks = after.acks - before.acks;
  row.datagrams = after.datagrams - before.datagrams;
  return row;
}

GroupOptions group_options(const BenchConfig& c, const std::string& algo, uint64_t max_size) {
  GroupOptions go;
  go.nodes = c.nodes;
  go.algo = algo;
  go.segment_bytes = c.segment;
  go.max_message_bytes = std::max<uint64_t>(max_size, 1);
  go.fabric.rate_mbit = c.rate_mbit;
  go.fabric.latency_us = c.latency_us;
  go.fabric.loss = c.loss;
  go.fabric.seed = c.seed;
  go.ports = c.ports;
  go.port_rate_mbit = c.port_rate_mbit;
  go.port_overhead_bytes = c.port_overhead;
  go.auto_rules_file = c.auto_rules;
  go.topology_file = c.topology;
  go.window = c.window;
  go.lanes = c.lanes;
  go.peer_timeout_ms = c.timeout_ms;
  go.multicast = c.mcast.enabled;
  go.mcast_root_delay_us = c.mcast.root_delay_us;
  go.mcast_sync_seed = c.mcast.sync_seed;
  go.mcast_repair_on_request = c.mcast.repair_on_request;
  go.mcast_loss = c.mcast.loss;
  go.mcast_loss_seed = c.mcast.loss_seed;
  go.streams.fanout = c.fanout;
  go.streams.window_batches = c.stream_window;
  go.streams.window_bytes = c.stream_window_bytes;
  go.streams.delivery_bytes = std::max<uint64_t>(go.streams.delivery_bytes, c.stream_window_bytes);
  if (!c.key_file.empty()) go.key = AuthKey::from_file(c.key_file);
  go.faults = c.faults;
  return go;
}

void print_header(const BenchConfig& c, const std::string& algo, uint32_t cores, const GroupCaps& caps) {
  std::printf("# lanecast bench: algo %s, %u nodes, root %u, segment %u B, %u lane%s, %u polling cores\n",
              algo.c_str(), c.nodes, c.root, caps.segment_bytes, c.lanes, c.lanes > 1 ? "s" : "", cores);
  if (!c.ports.empty()) {
    std::printf("# ports:");
    for (const auto& p : c.ports) std::printf(" %s", p.c_str());
    std::printf("\n");
    if (c.port_rate_mbit > 0)
      std::printf("# paced: each lane at %g Mbit/s, %u bytes per frame beyond it\n", c.port_rate_mbit, c.port_overhead);
  } else {
    std::printf("# fabric: rate %g Mbit/s%s, latency %g us%s, loss %g, seed %" PRIu64 "\n", c.rate_mbit,
                c.rate_mbit == 0 ? " (unlimited)" : "", c.latency_us, c.topology.empty() ? "" : " (topology file)",
                c.loss, c.seed);
  }
  if (caps.sealed)
    std::printf("# sealed: every frame, with the group key %s (docs/security.md)\n", caps.key_fingerprint.c_str());
  if (!c.faults.rules.empty()) std::printf("# faults: %s\n", engine::describe_faults(c.faults).c_str());
  std::printf("# multicast: %s; forwarding: %s; idle cores: %s\n", multicast_text(caps, c.mcast).c_str(),
              caps.tx_chained ? "zero-copy (chained frames)" : "flattened (a copy per frame: the port takes no chains)",
              caps.rx_wakeup ? "sleep until a frame arrives" : "nap on a timer (the port cannot wake them)");
  std::printf("# skew: rank1_us and rankN_us (rank %u) = the average time from the root's posting until ranks 1 and "
              "p-1 held the message; skew = (slowest - fastest) / median of every member's\n",
              c.nodes - 1);
  std::printf("%10s %6s %12s %12s %12s %12s %12s %10s %12s %12s %8s %9s %10s %10s %7s\n", "size", "iters", "avg_us",
              "min_us", "p50_us", "p99_us", "max_us", "MB/s", "spread_us", "acked_us", "resent", "verified", "rank1_us",
              "rankN_us", "skew");
}

void print_row(const Row& r) {
  if (!r.error.empty()) {
    std::printf("%10s  FAILED: %s\n", format_size(r.size).c_str(), r.error.c_str());
    return;
  }
  const size_t n = r.rank_us.size();
  std::printf("%10s %6u %12.1f %12.1f %12.1f %12.1f %12.1f %10.1f %12.1f %12.1f %8" PRIu64 " %9s %10.1f %10.1f %7.3f%s%s\n",
              format_size(r.size).c_str(), r.iters, r.avg_us, r.min_us, r.p50_us, r.p99_us, r.max_us, r.mbps, r.spread_us, r.acked_us,
              r.retransmits, r.verified ? "yes" : "NO", n > 1 ? r.rank_us[1] : 0.0, n > 0 ? r.rank_us[n - 1] : 0.0, r.skew,
              r.algo == r.chosen ? "" : "  ", r.algo == r.chosen ? "" : r.chosen.c_str());
  std::fflush(stdout);
}

void print_counters(LocalGroup& g) {
  std::printf("# counters (nonzero, and the copy and resend ones always)\n");
  for (uint32_t r = 0; r < g.size(); ++r) {
    std::printf("rank %u:", r);
    node_counters(g.member(r)).for_each([](std::string_view name, uint64_t v) {
      if (v || name == "tx_flatten_bytes" || name == "tx_retransmits")
        std::printf(" %.*s=%" PRIu64, static_cast<int>(name.size()), name.data(), v);
    });
    const PortCounters p = g.port_counters(r);
    std::printf("\n  port: rx=%" PRIu64 " tx=%" PRIu64 " tx_full=%" PRIu64 " missed=%" PRIu64 " rx_errors=%" PRIu64
                " tx_errors=%" PRIu64 " no_buffer=%" PRIu64 " lost_emulated=%" PRIu64 "\n%s",
                p.rx_frames, p.tx_frames, p.tx_full, p.rx_missed, p.rx_errors, p.tx_errors, p.rx_no_buffer,
                p.rx_lost_emulated, fault_counters_text(p).c_str());
  }
  const auto f = g.fabric_counters();
  std::printf("fabric: switched=%" PRIu64 " replicated=%" PRIu64 " not_joined=%" PRIu64 " lost=%" PRIu64
              " queue_drops=%" PRIu64 " pool_drops=%" PRIu64 " unknown_destination=%" PRIu64 "\n",
              f.switched, f.replicated, f.not_joined, f.lost, f.queue_drops, f.pool_drops, f.unknown_destination);
}

// Peak resident set of this process (VmHWM), in bytes; 0 if unknown.
uint64_t peak_rss() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return 0;
  char line[256];
  uint64_t kb = 0;
  while (std::fgets(line, sizeof line, f))
    if (std::sscanf(line, "VmHWM: %" SCNu64 " kB", &kb) == 1) break;
  std::fclose(f);
  return kb * 1024;
}

void print_memory(LocalGroup& g, uint64_t app_buffer) {
  const LocalGroup::Footprint f = g.footprint_per_member();
  const uint64_t rss = peak_rss();
  const uint64_t p = g.size();
  std::printf("# memory per member, KiB: state %.1f (channels %.1f, flight slabs %.1f, owed runs %.1f, segment store "
              "%.1f, stash %.1f, datagrams %.1f, node and machine arena %.1f), share of pools %.1f, of the fabric %.1f\n",
              f.node() / 1024.0, f.channels / 1024.0, f.flight / 1024.0, f.owed / 1024.0, f.store / 1024.0,
              f.stash / 1024.0, f.datagrams / 1024.0, f.other / 1024.0, f.pools / 1024.0, f.fabric / 1024.0);
  std::printf("# process peak RSS %.1f MiB: %.1f KiB per member beyond its %s application buffer\n", rss / 1048576.0,
              rss > p * app_buffer ? (rss - p * app_buffer) / 1024.0 / p : 0.0, format_size(app_buffer).c_str());
}

void print_json(const std::vector<Row>& rows) {
  std::printf("[\n");
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    std::string ranks;
    for (size_t k = 0; k < r.rank_us.size(); ++k) {
      char b[32];
      std::snprintf(b, sizeof b, "%s%.3f", k ? ", " : "", r.rank_us[k]);
      ranks += b;
    }
    std::printf("  {\"algo\": \"%s\", \"chosen\": \"%s\", \"nodes\": %u, \"size\": %" PRIu64
                ", \"iters\": %u, \"avg_us\": %.3f, \"min_us\": %.3f, \"p50_us\": %.3f, \"p99_us\": %.3f, \"max_us\": %.3f, "
                "\"mbps\": %.3f, \"spread_us\": %.3f, \"acked_us\": %.3f, \"data_frames\": %" PRIu64
                ", \"retransmits\": %" PRIu64 ", \"rto_timeouts\": %" PRIu64 ", \"acks\": %" PRIu64
                ", \"datagrams\": %" PRIu64 ", \"rank1_us\": %.3f, \"rankN_us\": %.3f, \"skew\": %.4f, \"rank_us\": [%s]"
                ", \"verified\": %s%s%s%s}%s\n",
                r.algo.c_str(), r.chosen.c_str(), r.nodes, r.size, r.iters, r.avg_us, r.min_us, r.p50_us, r.p99_us, r.max_us,
                r.mbps, r.spread_us, r.acked_us, r.data_frames, r.retransmits, r.timeouts, r.acks, r.datagrams,
                r.rank_us.size() > 1 ? r.rank_us[1] : 0.0, r.rank_us.empty() ? 0.0 : r.rank_us.back(), r.skew,
                ranks.c_str(), r.verified ? "true" : "false", r.error.empty() ? "" : ", \"error\": \"",
                r.error.c_str(), r.error.empty() ? "" : "\"", i + 1 < rows.size() ? "," : "");
  }
  std::printf("]\n");
}

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
  m.stream = c.stream;
  m.stream_messages = c.messages;
  m.msg_rate = c.msg_rate;
  return m;
}

// --testbed: what the members and their testbed take of the options; the
// options of the in-process fabric and of --config do not apply.
TestbedBenchConfig testbed_config(const BenchConfig& c, const OptionTable& table, const std::vector<std::string>& algos) {
  for (const char* o : {"nodes", "ports", "loss", "latency", "topology", "config", "rank", "json", "memory",
                        "auto-rules", "faults"})
    if (table.given(o)) throw UsageError("--" + std::string(o) + " does not apply to --testbed");
  TestbedBenchConfig t;
  t.testbed.nodes = c.testbed_nodes;
  t.testbed.lanes = c.lanes;
  t.testbed.mtu = c.mtu;
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
  t.deadline_s = c.deadline_s;
  t.mcast = c.mcast;
  t.stream_fanout = c.fanout;
  t.stream_window = table.given("stream-window") ? c.stream_window : 0;
  t.stream_window_bytes = table.given("stream-window-bytes") ? c.stream_window_bytes : 0;
  if (!c.key_file.empty()) {
    AuthKey::from_file(c.key_file);  // refused here, not in every member
    t.key_file = std::filesystem::absolute(c.key_file).string();
  }
  return t;
}

int run_stream_bench(const BenchConfig& c, const OptionTable& table, const std::vector<std::string>& algos,
                     uint64_t max_size) {
  for (const char* o : {"iters", "memory"})
    if (table.given(o)) throw UsageError("--" + std::string(o) + " does not apply to --stream");
  if (c.stream_window < 16) throw UsageError("--stream-window must be 16..65536 frames");
  if (c.messages == 0) throw UsageError("--messages must be at least 1");
  GroupOptions go = group_options(c, algos[0], std::max<uint64_t>(max_size, 1));
  if (max_size > go.streams.window_bytes / 2 - 64)
    throw UsageError("--sizes: " + format_size(max_size) + " does not fit the stream window of " +
                     format_size(go.streams.window_bytes) + " (at most half of it: --stream-window-bytes)");
  const uint64_t pool_mb = LocalGroup::memory_bytes(go) >> 20;
  EngineOptions eo;
  eo.polling_cores = c.cores;
  eo.memory_mb = static_cast<uint32_t>(std::max<uint64_t>(512, pool_mb * 2 + 256));
  Engine engine(eo);
  StreamBenchSettings s;
  s.sizes = c.sizes;
  s.messages = c.messages;
  s.warmup = c.warmup;
  s.msg_rate = c.msg_rate;
  s.publisher = c.root;
  s.seed = c.seed;
  s.json = c.json;
  s.counters = c.counters;
  return stream_bench(engine, algos, go, s);
}

}  // namespace

int bench_main(int argc, char** argv) {
  BenchConfig c;
  OptionTable table = make_table(c);
  if (table.parse(argc, argv, 1)) {
    std::cout << kUsage << "options:\n" << table.help() << "\nfaults (--faults KEY=VALUE,...):\n" << fault_text_help()
              << "\nalgorithms:\n";
    for (const auto& a : algos::algorithms())
      std::cout << "  " << a.name << std::string(a.name.size() < 22 ? 22 - a.name.size() : 1, ' ')
                << a.summary << "\n";
    return 0;
  }
  if (!c.ports.empty()) c.nodes = static_cast<uint32_t>(c.ports.size());
  c.mcast.loss_seed = c.seed;  // --mcast-loss draws from --seed, whatever their order
  std::vector<std::string> algos_to_run;
  if (c.algo == "all") {
    for (const auto& a : algos::algorithms()) algos_to_run.emplace_back(a.name);
  } else {
    std::string_view rest = c.algo;  // "chain" or "chain,bintree,auto"
    while (!rest.empty()) {
      const size_t comma = rest.find(',');
      const std::string one(rest.substr(0, comma));
      rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
      if (one != "auto" && !algos::algo_by_name(one)) {
        std::string names;
        for (const auto& a : algos::algorithms()) names += " " + std::string(a.name);
        throw UsageError("--algo: unknown algorithm '" + one + "' (known:" + names + ", auto, all)");
      }
      algos_to_run.push_back(one);
    }
    if (algos_to_run.empty()) throw UsageError("--algo: no algorithm given");
  }
  if (c.stream) {
    if (!table.given("sizes")) c.sizes = {64};
    if (!table.given("warmup")) c.warmup = 10'000;
  } else {
    for (const char* o : {"messages", "msg-rate", "fanout", "stream-window", "stream-window-bytes"})
      if (table.given(o)) throw UsageError("--" + std::string(o) + " applies to --stream only");
  }
  if (table.given("testbed")) return bench_testbed(testbed_config(c, table, algos_to_run));
  for (const char* o : {"mtu", "xdp", "deadline"})
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
      for (const char* o : {"fanout", "stream-window", "stream-window-bytes"})
        if (table.given(o))
          throw UsageError("--" + std::string(o) + " with --config: the group file says it (stream_fanout, "
                           "stream_window, stream_window_bytes; config/groups/README.md)");
    GroupBenchConfig gc;
    static_cast<MemberSchedule&>(gc) = schedule_of(c, algos_to_run);
    gc.config = c.config;
    gc.rank = c.rank;
    gc.yield_when_idle = c.yield_when_idle;
    return bench_group(gc);
  }
  if (c.nodes == 0) throw UsageError("--nodes must be at least 1");
  if (c.window == 0) throw UsageError("--window must be at least 1");
  if (c.lanes == 0) throw UsageError("--lanes must be 1..4");
  if (c.root >= c.nodes)
    throw UsageError("--root " + std::to_string(c.root) + " is outside the group of " +
                     std::to_string(c.nodes) + " nodes (ranks 0.." + std::to_string(c.nodes - 1) + ")");
  if (c.segment > 9000) throw UsageError("--segment must be 1..9000 bytes (or auto)");
  const uint64_t max_size = *std::max_element(c.sizes.begin(), c.sizes.end());
  if (c.stream) return run_stream_bench(c, table, algos_to_run, max_size);
  if (max_size > (uint64_t{1} << 32)) throw UsageError("--sizes: at most 4G per message");
  // Every member holds a buffer of the largest size, and the root's frames too.
  const uint64_t need = max_size * (c.nodes + 1);
  const uint64_t have = physical_memory();
  if (have && need > have / 2)
    throw UsageError("--sizes: " + format_size(max_size) + " x " + std::to_string(c.nodes) +
                     " members needs " + format_size(need) + ", more than half of this machine's " +
                     format_size(have) + " of memory");

  // One group at a time; twice its pools leaves room for fragmentation.
  const uint64_t pool_mb = LocalGroup::memory_bytes(group_options(c, algos_to_run[0], max_size)) >> 20;
  EngineOptions eo;
  eo.polling_cores = c.cores;  // 0: the engine's default (lanecast/lanecast.h)
  eo.memory_mb = static_cast<uint32_t>(std::max<uint64_t>(512, pool_mb * 2 + 256));
  Engine engine(eo);

  std::vector<std::vector<std::byte>> bufs(c.nodes, std::vector<std::byte>(max_size));
  std::vector<Row> rows;
  bool all_ok = true;
  for (const auto& algo : algos_to_run) {
    const GroupOptions go = group_options(c, algo, max_size);
    auto g = engine.create_local_group(go);
    if (!c.json) print_header(c, algo, engine.polling_cores(), g->caps());
    for (uint64_t size : c.sizes) {
      Row r = run_size(*g, c, algo, size, bufs);
      all_ok = all_ok && r.verified && r.error.empty();
      if (!c.json) print_row(r);
      rows.push_back(r);
      if (!r.error.empty()) break;  // later sizes would only repeat the failure
    }
    if (c.counters && !c.json) print_counters(*g);
    if (c.memory && !c.json) print_memory(*g, max_size);
    if (!c.json) std::printf("\n");
  }
  if (c.json) print_json(rows);
  if (!all_ok) std::fprintf(stderr, "lanecast bench: some broadcasts failed or were not verified\n");
  return all_ok ? 0 : 1;
}

}  // namespace lanecast::apps
