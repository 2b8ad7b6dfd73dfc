// The replaying thread: each message from the read-ahead ring at its due
// time against absolute time, the send-time error measured.
#include <sys/resource.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <stdexcept>
#include <thread>

#include "apps/common/options.h"
#include "apps/replay/replay_config.h"

namespace lanecast::apps {
namespace {

uint64_t wait_until(uint64_t due) {
  for (;;) {
    const uint64_t now = clock_ns();
    if (now >= due) return now;
    // Sleep while far; spin the last 150 us (a sleep overshoots by tens of us).
    if (due - now > 250'000) std::this_thread::sleep_for(std::chrono::nanoseconds(due - now - 150'000));
  }
}

// The next message of the walk into `e`; false once every loop was taken.
// A message the reader has not written yet is waited for and counted: at a
// due time, lateness the file caused (the disk, or members still checking
// what the ring holds).
bool next_entry(replay::ReadAhead::Walk& walk, const replay::ReadAhead& ra, const Publisher& pub,
                replay::RingEntry& e, ReplayOutcome& o) {
  if (walk.peek(e)) return true;
  for (uint32_t tries = 0;; ++tries) {
    if (ra.finished()) return walk.peek(e);
    if (ra.failed()) throw std::runtime_error(ra.failure());
    if (const Status s = pub.status(); !s.ok()) throw std::runtime_error("replay: " + s.message);
    if (tries == 0) ++o.file_waits;
    if (tries < 64) std::this_thread::yield();
    else std::this_thread::sleep_for(std::chrono::microseconds(20));
    if (walk.peek(e)) return true;
  }
}

// --stats: the count at every message (one relaxed store), the send
// error's percentiles (a walk over the histogram) about every 100 ms.
void show_live(ReplayLive& live, const ReplayOutcome& o, uint64_t& next_ns) {
  live.published.store(o.published, std::memory_order_relaxed);
  const uint64_t now = clock_ns();
  if (now < next_ns) return;
  next_ns = now + 100'000'000;
  live.error_p50_ns.store(o.error.percentile(0.5), std::memory_order_relaxed);
  live.error_p99_ns.store(o.error.percentile(0.99), std::memory_order_relaxed);
}

}  // namespace

ReplayOutcome publish_all(Publisher& pub, replay::ReadAhead& ra, const replay::Timing& timing, ReplayLive* live) {
  const bool timed = timing.kind != replay::Timing::TopSpeed;
  replay::ReadAhead::Walk walk(&ra);
  ReplayOutcome o;
  ra.fill();  // before the clock starts
  const uint64_t start = clock_ns();
  uint64_t anchor = start;
  replay::RingEntry e;
  uint64_t live_next = 0;
  while (next_entry(walk, ra, pub, e, o)) {
    // Each loop's timing starts afresh, with room to reach its first packet's time.
    if (e.loop_start) anchor = clock_ns() + 200'000;
    const uint64_t due = anchor + e.due_ns;
    if (timed) wait_until(due);
    for (;;) {
      const uint64_t t = clock_ns();
      const PublishResult r = pub.publish(e.data);
      if (r == PublishResult::Ok) {
        if (timed) o.error.add(t > due ? t - due : 0);
        break;
      }
      if (r != PublishResult::WouldBlock) throw std::runtime_error("replay: " + pub.status().message);
      ++o.would_block;
      std::this_thread::yield();
    }
    ++o.published;
    walk.advance();
    ra.release(0, walk);
    if (live != nullptr) show_live(*live, o, live_next);
  }
  if (live != nullptr) show_live(*live, o, live_next = 0);
  o.seconds = static_cast<double>(clock_ns() - start) / 1e9;
  return o;
}

void print_source(const ReplayConfig& c, const replay::CaptureSummary& s) {
  std::printf("# lanecast replay: %s (%s, %s, %s time stamps): %" PRIu64 " packets read, %" PRIu64 " messages (%s)",
              c.pcap.c_str(), s.pcapng ? "pcapng" : "pcap", s.link.c_str(), s.nanosecond ? "nanosecond" : "microsecond",
              s.counts.read, s.messages, format_size(s.bytes).c_str());
  if (s.counts.not_udp || s.counts.fragments || s.counts.truncated || s.filtered_out)
    std::printf("; skipped: %" PRIu64 " not UDP, %" PRIu64 " fragments, %" PRIu64 " truncated, %" PRIu64
                " left out by the filter",
                s.counts.not_udp, s.counts.fragments, s.counts.truncated, s.filtered_out);
  std::printf("\n# timing: %s, %" PRIu64 " loop%s; read ahead through a ring of %s\n", c.timing.describe().c_str(),
              c.loops, c.loops == 1 ? "" : "s", format_size(c.ring_bytes()).c_str());
}

double peak_rss_mib() {
  rusage u{};
  if (getrusage(RUSAGE_SELF, &u) != 0) return 0;
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // KiB on Linux
}

const char* timing_name(const replay::Timing& timing) {
  switch (timing.kind) {
    case replay::Timing::TopSpeed: return "topspeed";
    case replay::Timing::Speed: return "speed";
    case replay::Timing::Pps: return "pps";
    default: return "mbps";
  }
}

void add_send_error(Json& j, const ReplayOutcome& o, bool timed) {
  const auto us = [](uint64_t ns) { return rounded(static_cast<double>(ns) / 1e3); };
  j["send_error_p50_us"] = timed ? us(o.error.percentile(0.5)) : 0.0;
  j["send_error_p99_us"] = timed ? us(o.error.percentile(0.99)) : 0.0;
  j["send_error_max_us"] = timed ? us(o.error.max()) : 0.0;
  Json bands = Json::array();
  if (timed)
    for (const auto& [upper, n] : o.error.bands()) bands.push_back({us(upper), n});
  j["send_error_histogram_us"] = std::move(bands);
}

}  // namespace lanecast::apps
