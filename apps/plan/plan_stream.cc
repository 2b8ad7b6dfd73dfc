#include "apps/plan/plan_stream.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "algos/sim/stream_sim.h"
#include "apps/common/json_output.h"
#include "apps/common/options.h"

namespace lanecast::apps {
namespace {

using algos::sim::Picos;
using algos::sim::StreamModel;
using algos::sim::StreamPrediction;

StreamModel model_of(const PlanConfig& c, uint32_t nodes, uint64_t size) {
  StreamModel m;
  m.nodes = nodes;
  m.fanout = c.stream.fanout;
  m.multicast = c.stream.multicast;
  m.message_bytes = static_cast<uint32_t>(size);
  m.rate = c.stream.rate;
  m.messages = c.stream.messages;
  m.segment = c.segment;
  m.t0 = c.net.latency.default_latency();
  m.bytes_per_second = c.net.bytes_per_second;
  m.frame_overhead_bytes = c.net.frame_overhead_bytes;
  m.frame_time = c.net.frame_overhead_time;
  return m;
}

double us(Picos t) { return rounded(static_cast<double>(t) / 1e6); }

// The fanout the model ran (every other member's over multicast).
uint32_t fanout_of(const StreamModel& m) { return m.multicast ? m.nodes - 1 : std::min(m.fanout, m.nodes - 1); }
// Batches sent by every member's port, per message published.
double copies_per_msg(const StreamModel& m, const StreamPrediction& r) {
  return static_cast<double>(r.copies) / static_cast<double>(m.messages);
}

Json row_json(const StreamModel& m, const StreamPrediction& r) {
  Json j;
  j["stream"] = m.multicast ? "multicast" : "tree";
  j["nodes"] = m.nodes;
  j["size"] = m.message_bytes;
  j["fanout"] = fanout_of(m);
  j["messages"] = m.messages;
  j["offered_msgs_per_s"] = m.rate > 0 ? Json(m.rate) : Json();
  j["msgs_per_s"] = rounded(r.msgs_per_second, 1);
  j["batches"] = r.batches;
  j["msgs_per_batch"] = rounded(r.messages_per_batch);
  j["copies_per_msg"] = rounded(copies_per_msg(m, r));
  j["depth"] = r.depth;
  j["p50_us"] = us(r.p50);
  j["p99_us"] = us(r.p99);
  j["p999_us"] = us(r.p999);
  j["max_us"] = us(r.max);
  j["mean_us"] = rounded(r.mean / 1e6);
  j["last_delivery_us"] = us(r.last_delivery);
  return j;
}

void print_header(const PlanConfig& c) {
  const std::string offered = c.stream.rate > 0 ? "offered at " + std::to_string(static_cast<uint64_t>(c.stream.rate)) + " msgs/s"
                                                : "all at once (the most the stream carries)";
  const std::string how = c.stream.multicast ? "one multicast per batch" : "a tree of fanout " + std::to_string(c.stream.fanout);
  char line[512];
  std::snprintf(line, sizeof line, "# lanecast plan --stream: %" PRIu64 " messages from rank 0, %s; %s\n", c.stream.messages,
                offered.c_str(), how.c_str());
  std::cout << line;
  std::snprintf(line, sizeof line,
                "# model: t0 %.3f us, %.1f MB/s, batches of %u B (16-byte head per record), %u B and %.1f ns more per "
                "frame; latency percentiles over every (message, member), within 1%% (docs/algorithms.md, 'Streams')\n",
                static_cast<double>(c.net.latency.default_latency()) / 1e6, c.net.bytes_per_second / 1e6, c.segment,
                c.net.frame_overhead_bytes, static_cast<double>(c.net.frame_overhead_time) / 1e3);
  std::cout << line;
  std::snprintf(line, sizeof line, "%8s %10s %6s %14s %10s %10s %8s %6s %12s %12s %12s %12s\n", "nodes", "size", "fanout",
                "msgs/s", "msgs/batch", "copies/msg", "batches", "depth", "p50_us", "p99_us", "p99.9_us", "max_us");
  std::cout << line;
}

void print_row(const StreamModel& m, const StreamPrediction& r) {
  char line[512];
  std::snprintf(line, sizeof line, "%8u %10u %6u %14.1f %10.2f %10.3f %8" PRIu64 " %6u %12.3f %12.3f %12.3f %12.3f\n",
                m.nodes, m.message_bytes, fanout_of(m), r.msgs_per_second, r.messages_per_batch, copies_per_msg(m, r),
                r.batches, r.depth, us(r.p50), us(r.p99), us(r.p999), us(r.max));
  std::cout << line;
}

}  // namespace

int run_plan_stream(const PlanConfig& c) {
  // Every model checked before anything is printed: a refused one is a usage error.
  for (uint32_t p : c.nodes)
    for (uint64_t n : c.sizes)
      if (const std::string why = algos::sim::stream_model_problem(model_of(c, p, n)); !why.empty())
        throw UsageError("--stream: " + why);
  if (c.json) std::cout << "[\n";
  else print_header(c);
  bool first = true;
  for (uint32_t p : c.nodes)
    for (uint64_t n : c.sizes) {
      const StreamModel m = model_of(c, p, n);
      const StreamPrediction r = algos::sim::simulate_stream(m);
      if (c.json) {
        std::cout << (first ? "" : ",\n") << json_text(row_json(m, r));
        first = false;
      } else {
        print_row(m, r);
      }
      std::cout.flush();
    }
  if (c.json) std::cout << "\n]\n";
  return 0;
}

}  // namespace lanecast::apps
