#include "apps/bench/bench_report.h"

#include <sys/resource.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "apps/bench/skew.h"
#include "apps/common/fault_text.h"
#include "apps/common/json_output.h"
#include "engine/group/fault_keys.h"
#include "engine/api/member_internals.h"

namespace lanecast::apps {

void print_bench_header(const BenchConfig& c, const std::string& algo, uint32_t cores, const GroupCaps& caps) {
  std::printf("# lanecast bench: algo %s, %u nodes, root %u, segment %u B, %u lane%s, %u polling cores\n",
              algo.c_str(), c.nodes, c.root, caps.segment_bytes, c.lanes, c.lanes > 1 ? "s" : "", cores);
  if (!c.ports.empty()) {
    std::printf("# ports:");
    for (const auto& p : c.ports) std::printf(" %s", p.c_str());
    std::printf("\n");
    if (finds_rate(c))
      std::printf("# paced: each lane finds its rate (rate control, docs/engine.md)%s\n",
                  c.port_rate_mbit > 0 ? ", --port-rate its ceiling" : "");
    else if (c.port_rate_mbit > 0)
      std::printf("# paced: each lane at %g Mbit/s, %u bytes per frame beyond it\n", c.port_rate_mbit, c.port_overhead);
    else
      std::printf("# paced: no (--no-rate-control): as fast as the ports take frames\n");
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

void print_bench_row(const BenchRow& r) {
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

void print_bench_counters(LocalGroup& g) {
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

void print_bench_memory(LocalGroup& g, uint64_t app_buffer) {
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

double percentile(std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  const size_t k = std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

namespace {

Json bench_json(const BenchRow& r) {
  Json o;
  o["algo"] = r.algo;
  o["chosen"] = r.chosen;
  o["nodes"] = r.nodes;
  o["size"] = r.size;
  o["iters"] = r.iters;
  o["avg_us"] = rounded(r.avg_us);
  o["min_us"] = rounded(r.min_us);
  o["p50_us"] = rounded(r.p50_us);
  if (r.per_process) {
    o["span_us"] = rounded(r.span_us);
  } else {
    o["p99_us"] = rounded(r.p99_us);
    o["max_us"] = rounded(r.max_us);
    o["data_frames"] = r.data_frames;
    o["retransmits"] = r.retransmits;
    o["rto_timeouts"] = r.timeouts;
    o["acks"] = r.acks;
    o["datagrams"] = r.datagrams;
  }
  o["mbps"] = rounded(r.mbps);
  o["spread_us"] = rounded(r.spread_us);
  o["acked_us"] = rounded(r.acked_us);
  o["rank1_us"] = rounded(r.rank_us.size() > 1 ? r.rank_us[1] : 0.0);
  o["rankN_us"] = rounded(r.rank_us.empty() ? 0.0 : r.rank_us.back());
  o["skew"] = rounded(r.skew, 4);
  Json ranks = Json::array();
  for (const double us : r.rank_us) ranks.push_back(rounded(us));
  o["rank_us"] = std::move(ranks);
  o["rate_mbit"] = rounded(r.rate_mbit, 1);
  o["segment"] = r.segment;
  o["verified"] = r.verified;
  if (!r.error.empty()) o["error"] = r.error;
  return o;
}

}  // namespace

void print_bench_json(const std::vector<BenchRow>& rows, std::FILE* to) {
  std::vector<Json> all;
  for (const BenchRow& r : rows) all.push_back(bench_json(r));
  print_json_rows(all, to);
}

}  // namespace lanecast::apps
