// `lanecast bench --stream`: one publisher's stream of messages to the whole
// group, flat out or at an offered rate; per message size the messages per
// second every member delivered, and the latency from publish() to delivery
// on every member (percentiles and a log-bucket histogram), with every
// message checked (order, count, bytes).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "apps/bench/bare_schedule.h"
#include "apps/bench/log_histogram.h"
#include "lanecast/lanecast.h"

namespace lanecast::apps {

struct StreamBenchSettings {
  std::vector<uint64_t> sizes;
  uint64_t messages = 1'000'000;  // timed, per size
  uint64_t warmup = 10'000;       // untimed, per size, before the timed ones
  double msg_rate = 0;            // offered messages per second; 0: as fast as the window allows
  Rank publisher = 0;
  uint64_t seed = 1;
  bool json = false;
  bool counters = false;
};

struct StreamRow {
  std::string algo;
  uint32_t fanout = 0;
  uint32_t nodes = 0;
  uint64_t size = 0;
  uint64_t messages = 0;
  double offered = 0;      // messages per second asked for (0: flat out)
  double published_per_s = 0;
  double msgs_per_s = 0;   // timed messages / (last delivery anywhere - first timed publish)
  double mbps = 0;
  double p50_us = 0, p99_us = 0, p999_us = 0, max_us = 0, mean_us = 0;
  uint64_t would_block = 0;  // publish() said WouldBlock (the window was full)
  double frames_per_msg = 0; // stream frames sent by every member per message
  bool verified = false;
  std::string error;
  LogHistogram histogram;  // every member's deliveries of the timed messages
  // In process: how late bare threads on the same CPUs got to the same
  // schedule (bare_schedule.h) - the machine's share of the tail.
  bool has_bare = false;
  BareRun bare;
  // How long the polling cores waited for their CPUs while the timed
  // messages ran (cpu_wait.h): the machine's hand in the stream's own tail.
  double poller_cpu_wait_us = 0;
  // The polling cores' longest cycle meanwhile (Engine::longest_poll_cycle_ns)
  // and their cycles over 1 ms: how long at once they were away.
  double poller_longest_cycle_us = 0;
  uint64_t poller_long_cycles = 0;
};

// A row's figures from its histogram (row.histogram, row.messages and
// row.size set) and its times on the host clock: the first timed publish,
// the last delivery anywhere, the last publish; `frames` stream frames sent
// for `total` messages (warm-up included).
void fill_stream_figures(StreamRow& row, uint64_t first_timed_ns, uint64_t last_ns, uint64_t end_publish_ns,
                         uint64_t frames, uint64_t total);
// The table, as both benches print it: the column names, then a row and its
// histogram line (or FAILED and why).
void print_stream_columns();
void print_stream_row(const StreamRow& r);
// The rows as a JSON array, one object per (algorithm, size).
void print_stream_json(const std::vector<StreamRow>& rows);

// Runs the stream benchmark on a group made with `go` (any number of
// algorithms, one group each); prints the table or JSON. Returns 0 when
// every message was delivered and verified everywhere.
int stream_bench(Engine& engine, const std::vector<std::string>& algos, const GroupOptions& go_base,
                 const StreamBenchSettings& s);

}  // namespace lanecast::apps
