#include "apps/bench/bench_in_process.h"

#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <random>

#include "apps/bench/bench_report.h"
#include "apps/bench/skew.h"
#include "apps/bench/stream_bench.h"
#include "apps/common/pattern.h"
#include "apps/common/progress_line.h"
#include "engine/api/member_internals.h"
#include "engine/runtime/clock.h"

namespace lanecast::apps {
namespace {

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
    t.timeouts += k.channels.rto_timeouts.get();
    t.acks += k.tx_acks.get();
    t.datagrams += k.tx_datagrams.get();
  }
  return t;
}

// Progress of a size that runs for seconds: after the first 2 s, a line a
// second (stderr; in place on a terminal, taken off before the size's row).
constexpr uint64_t kQuietFirstNs = 2'000'000'000, kProgressEveryNs = 1'000'000'000;

BenchRow run_size(LocalGroup& g, const BenchConfig& c, const std::string& algo, uint64_t size,
             std::vector<std::vector<std::byte>>& bufs, ProgressLine& progress) {
  const uint64_t size_start = engine::now_ns();
  uint64_t next_show = size_start + kQuietFirstNs;
  BenchRow row{algo, std::string(algos::algo_info(resolve_algo(g.member(0), algo, size)).name),
          c.nodes, size, c.iters, 0, 0, 0, 0, 0, 0, 0, 0, true, {}};
  row.rate_mbit = c.ports.empty() ? c.rate_mbit : c.port_rate_mbit;
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
    if (const uint64_t now = engine::now_ns(); now >= next_show && it + 1 < c.warmup + c.iters) {
      char text[160];
      std::snprintf(text, sizeof text, "bench: %s %s: broadcast %u of %u (%u warm-up), %.0f s", algo.c_str(),
                    format_size(size).c_str(), it + 1, c.warmup + c.iters, c.warmup,
                    static_cast<double>(now - size_start) / 1e9);
      progress.show(text);
      next_show = now + kProgressEveryNs;
    }
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
  go.rate_control = finds_rate(c);
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
  go.streams.multicast = c.stream_multicast;
  go.streams.delivery_bytes = std::max<uint64_t>(go.streams.delivery_bytes, c.stream_window_bytes);
  if (!c.key_file.empty()) go.key = AuthKey::from_file(c.key_file);
  go.faults = c.faults;
  return go;
}

// The engine for groups like `go`, one at a time: twice its pools leaves
// room for fragmentation; --cores or the engine's default (0) cores.
EngineOptions engine_options(const BenchConfig& c, const GroupOptions& go) {
  const uint64_t pool_mb = LocalGroup::memory_bytes(go) >> 20;
  EngineOptions eo;
  eo.polling_cores = c.cores;
  eo.memory_mb = static_cast<uint32_t>(std::max<uint64_t>(512, pool_mb * 2 + 256));
  return eo;
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
  Engine engine(engine_options(c, go));
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

int bench_in_process(const BenchConfig& c, const OptionTable& table, const std::vector<std::string>& algos_to_run) {
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

  Engine engine(engine_options(c, group_options(c, algos_to_run[0], max_size)));

  std::vector<std::vector<std::byte>> bufs(c.nodes, std::vector<std::byte>(max_size));
  std::vector<BenchRow> rows;
  bool all_ok = true;
  ProgressLine progress(c.quiet);
  for (const auto& algo : algos_to_run) {
    const GroupOptions go = group_options(c, algo, max_size);
    auto g = engine.create_local_group(go);
    if (!c.json) print_bench_header(c, algo, engine.polling_cores(), g->caps());
    for (uint64_t size : c.sizes) {
      BenchRow r = run_size(*g, c, algo, size, bufs, progress);
      r.segment = g->caps().segment_bytes;
      progress.clear();
      all_ok = all_ok && r.verified && r.error.empty();
      if (!c.json) print_bench_row(r);
      rows.push_back(r);
      if (!r.error.empty()) break;  // later sizes would only repeat the failure
    }
    if (c.counters && !c.json) print_bench_counters(*g);
    if (c.memory && !c.json) print_bench_memory(*g, max_size);
    if (!c.json) std::printf("\n");
  }
  if (c.json) print_bench_json(rows);
  if (!all_ok) std::fprintf(stderr, "lanecast bench: some broadcasts failed or were not verified\n");
  return all_ok ? 0 : 1;
}

}  // namespace lanecast::apps
