// What `lanecast bench` prints of broadcasts in process: a row per
// (algorithm, size) - times, bandwidth, skew, frames - as a table under a
// header that says how the group was set up, or as JSON; the members'
// counters and memory on request.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "apps/bench/bench_options.h"
#include "lanecast/lanecast.h"

namespace lanecast::apps {

struct BenchRow {
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
  // Each link's rate as the run set it (the fabric's, or --port-rate on
  // ports; 0: unlimited), for shares of the line.
  double rate_mbit = 0;
  // Payload bytes per data frame, as the group resolved it (for lanecast
  // plan --segment, which tune fits).
  uint32_t segment = 0;
  // One member per process (--config, --testbed), timed as osu_bcast: avg_us
  // and min_us are the members' (the largest average, the least minimum),
  // span_us the root's posting to the last member holding the message and
  // p50_us its median; the other percentiles and frame counts are not
  // measured there and left out.
  bool per_process = false;
  double span_us = 0;
};

// The q-quantile of `v` (nearest rank); reorders v. Every p50_us, p99_us a
// bench row has (in process, of the completions; member processes, of the
// spans).
double percentile(std::vector<double>& v, double q);

void print_bench_header(const BenchConfig& c, const std::string& algo, uint32_t cores, const GroupCaps& caps);
void print_bench_row(const BenchRow& r);
void print_bench_counters(LocalGroup& g);
void print_bench_memory(LocalGroup& g, uint64_t app_buffer);
// `bench --json`: an array of one object per row (docs/json.md).
void print_bench_json(const std::vector<BenchRow>& rows, std::FILE* to = stdout);

}  // namespace lanecast::apps
