// `lanecast replay --nodes N`: every member in this process, on the
// in-process fabric. The members check on their polling cores
// (replay::DeliveryCheck); with --record a recording thread writes each
// member's file as the messages come.
#include <sys/stat.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <thread>

#include "apps/common/options.h"
#include "apps/replay/cpu_pin.h"
#include "apps/replay/delivery_check.h"
#include "apps/replay/replay_config.h"
#include "apps/replay/replay_stats.h"
#include "lanecast/lanecast.h"

namespace lanecast::apps {
namespace {

// Slots for delivery times per member with --record: the read-ahead ring
// then holds at most this many messages. 16 MiB of slots for the whole
// group, 1K..64K per member.
uint64_t time_slots_for(uint32_t nodes) {
  uint64_t slots = 65536;
  while (slots > 1024 && slots * 8 * nodes > (16u << 20)) slots /= 2;
  return slots;
}

// Writes every member's deliveries to DIR/member-R.pcap as they come, from
// its own thread: no polling core ever writes a file.
class Recorder {
 public:
  Recorder(const ReplayConfig& c, std::vector<std::unique_ptr<replay::DeliveryCheck>>& checks, uint64_t total)
      : checks_(checks), total_(total), to_real_(replay::realtime_offset_ns()), publisher_(c.publisher) {
    if (::mkdir(c.record.c_str(), 0755) != 0 && errno != EEXIST)
      throw std::runtime_error("--record " + c.record + ": " + std::strerror(errno));
    for (size_t r = 0; r < checks.size(); ++r)
      files_.push_back(std::make_unique<replay::PcapWriter>(c.record + "/member-" + std::to_string(r) + ".pcap",
                                                            c.record_link()));
  }
  void start() { thread_ = std::thread([this] { run(); }); }
  // Waits for what the members took to be written, or gives up at `give_up`.
  void finish(uint64_t give_up) {
    give_up_.store(give_up, std::memory_order_relaxed);
    if (thread_.joinable()) thread_.join();
    if (failure_) std::rethrow_exception(failure_);
    for (auto& f : files_) f->flush();
  }
  ~Recorder() {
    give_up_.store(0, std::memory_order_relaxed);
    if (thread_.joinable()) thread_.join();
  }

 private:
  void run() {
    try {
      for (;;) {
        uint64_t moved = 0;
        bool all_done = true;
        for (size_t r = 0; r < checks_.size(); ++r) {
          replay::DeliveryCheck& m = *checks_[r];
          replay::PcapWriter& f = *files_[r];
          moved += m.drain([&](uint64_t t, std::span<const std::byte> bytes) {
            f.write(static_cast<uint64_t>(static_cast<int64_t>(t) + to_real_), publisher_, 0, bytes);
          });
          f.check();
          if (m.written() < total_ && !(m.failed() && m.written() == m.delivered())) all_done = false;
        }
        if (all_done || clock_ns() >= give_up_.load(std::memory_order_relaxed)) return;
        if (moved == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
    } catch (...) {
      failure_ = std::current_exception();
      // Nothing more is written: the members hold the ring back no longer.
      for (auto& m : checks_) m->abandon_record();
    }
  }

  std::vector<std::unique_ptr<replay::DeliveryCheck>>& checks_;
  std::vector<std::unique_ptr<replay::PcapWriter>> files_;
  uint64_t total_;
  int64_t to_real_;
  Rank publisher_;
  std::atomic<uint64_t> give_up_{UINT64_MAX};
  std::exception_ptr failure_;
  std::thread thread_;
};

}  // namespace

int replay_in_process(const ReplayConfig& c, const replay::CaptureSummary& src) {
  const uint64_t window_bytes = c.window();
  GroupOptions go;
  go.nodes = c.nodes;
  go.fabric.rate_mbit = c.rate_mbit;
  go.max_message_bytes = std::max<uint64_t>(1, window_bytes / 2);
  go.streams.window_bytes = window_bytes;
  go.streams.delivery_bytes = window_bytes;
  EngineOptions eo;
  eo.polling_cores = c.cores;
  // The polling cores never sleep while replaying: waking a sleeping core at
  // a publish puts it on the replaying thread's CPU for a moment, and the
  // next packet leaves milliseconds late instead of microseconds.
  eo.idle_sleep_max_ns = 0;
  eo.memory_mb = static_cast<uint32_t>(std::max<uint64_t>(512, (LocalGroup::memory_bytes(go) >> 20) * 2 + 256));

  // The ring, the checks and the recorder outlive the engine: its polling
  // cores call the checks until it stops.
  const bool record = !c.record.empty();
  const bool check_bytes = c.verify || record;  // a record is written from the ring: its bytes must be the ones delivered
  const uint64_t time_slots = record ? time_slots_for(c.nodes) : 0;
  replay::ReadAhead::Options ro;
  ro.capture = c.capture();
  ro.timing = c.timing;
  ro.loops = c.loops;
  ro.messages = src.messages;
  ro.bytes = c.ring_bytes();
  ro.checkers = check_bytes ? c.nodes : 0;
  if (record) ro.max_records = time_slots;
  replay::ReadAhead ra(ro);
  std::vector<std::unique_ptr<replay::DeliveryCheck>> checks;
  for (Rank r = 0; r < c.nodes; ++r)
    checks.push_back(std::make_unique<replay::DeliveryCheck>(check_bytes ? &ra : nullptr, r + 1, time_slots));
  const uint64_t total = c.loops * src.messages;
  std::unique_ptr<Recorder> recorder;
  if (record) recorder = std::make_unique<Recorder>(c, checks, total);

  Engine engine(eo);
  auto g = engine.create_local_group(go);
  for (Rank r = 0; r < c.nodes; ++r) {
    replay::DeliveryCheck* m = checks[r].get();
    g->member(r).on_message([m](const StreamMessage& msg) { m->take(msg.seq, msg.data); });
  }
  if (recorder) recorder->start();
  Publisher pub = g->member(c.publisher).open_stream(0);
  const std::string placed = replay::keep_off(engine.poller_cpus());
  if (!c.json) {
    print_source(c, src);
    std::printf("# %u members in this process (fabric %g Mbit/s), rank %u replays, %u polling core%s; the replaying "
                "thread %s\n",
                c.nodes, c.rate_mbit, c.publisher, engine.polling_cores(), engine.polling_cores() == 1 ? "" : "s",
                placed.c_str());
    std::fflush(stdout);
  }
  ReplayLive live;
  ReplayOutcome o;
  {
    const ReplayStats stats(c.stats_s, total, live, [&checks] {
      uint64_t least = UINT64_MAX;
      for (const auto& m : checks) least = std::min(least, m->delivered());
      return least;
    });
    o = publish_all(pub, ra, c.timing, &live);
  }
  const uint64_t give_up = clock_ns() + 60'000'000'000ull;
  for (auto& m : checks)
    while (m->delivered() < total && !m->failed() && clock_ns() < give_up)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (recorder) recorder->finish(give_up);
  uint64_t min_delivered = UINT64_MAX;
  std::string error;
  for (Rank r = 0; r < c.nodes; ++r) {
    const replay::DeliveryCheck& m = *checks[r];
    const uint64_t d = m.delivered();
    min_delivered = std::min(min_delivered, d);
    if (m.failed() && error.empty()) error = "rank " + std::to_string(r) + ": " + m.error();
    if (d < total && error.empty())
      error = "rank " + std::to_string(r) + ": " + std::to_string(d) + " of " + std::to_string(total) + " messages delivered";
    if (recorder && m.written() != d && error.empty())
      error = "rank " + std::to_string(r) + ": " + std::to_string(m.written()) + " of " + std::to_string(d) +
              " messages recorded";
  }
  const bool ok = error.empty();
  const bool timed = c.timing.kind != replay::Timing::TopSpeed;
  const auto us = [](uint64_t ns) { return static_cast<double>(ns) / 1e3; };
  const double rate = o.seconds > 0 ? static_cast<double>(o.published) / o.seconds : 0;
  if (c.json) {
    Json j;
    j["pcap"] = c.pcap;
    j["packets"] = src.messages;
    j["packets_read"] = src.counts.read;
    j["skipped"] = src.counts.read - src.messages;
    j["loops"] = c.loops;
    j["nodes"] = c.nodes;
    j["timing"] = timing_name(c.timing);
    j["messages_published"] = o.published;
    j["messages_delivered_min"] = min_delivered;
    j["seconds"] = rounded(o.seconds, 6);
    j["messages_per_s"] = rounded(rate, 1);
    add_send_error(j, o, timed);
    j["would_block"] = o.would_block;
    j["file_waits"] = o.file_waits;
    j["read_ahead_bytes"] = ra.ring_bytes();
    j["peak_rss_mib"] = rounded(peak_rss_mib(), 1);
    j["verified"] = ok && c.verify;
    if (!ok) j["error"] = error;
    print_json(j);
  } else {
    std::printf("%12s %12s %10s %12s %14s %14s %14s %11s %10s %9s\n", "published", "delivered", "seconds", "msgs_per_s",
                "send_err_p50", "send_err_p99", "send_err_max", "would_block", "file_waits", "verified");
    char p50[32] = "-", p99[32] = "-", mx[32] = "-";
    if (timed) {
      std::snprintf(p50, sizeof p50, "%.1f us", us(o.error.percentile(0.5)));
      std::snprintf(p99, sizeof p99, "%.1f us", us(o.error.percentile(0.99)));
      std::snprintf(mx, sizeof mx, "%.1f us", us(o.error.max()));
    }
    std::printf("%12" PRIu64 " %12" PRIu64 " %10.3f %12.0f %14s %14s %14s %11" PRIu64 " %10" PRIu64 " %9s\n",
                o.published, min_delivered, o.seconds, rate, p50, p99, mx, o.would_block, o.file_waits,
                !c.verify ? "-" : ok ? "yes" : "NO");
    if (!ok) std::printf("FAILED: %s\n", error.c_str());
    if (record)
      std::printf("# recorded: %s/member-0.pcap .. member-%u.pcap (%s, nanosecond time stamps)\n", c.record.c_str(),
                  c.nodes - 1, c.record_link() == replay::RecordLink::Udp ? "UDP payloads" : "frames");
    std::printf("# peak RSS %.1f MiB (read-ahead ring %s)\n", peak_rss_mib(), format_size(ra.ring_bytes()).c_str());
  }
  if (c.counters)
    for (Rank r = 0; r < c.nodes; ++r) {
      std::printf("rank %u:", r);
      for (const auto& [name, v] : g->member(r).counters()) std::printf(" %s=%" PRIu64, name.c_str(), v);
      std::printf("\n");
    }
  return ok ? 0 : 1;
}

}  // namespace lanecast::apps
