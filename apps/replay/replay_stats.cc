#include "apps/replay/replay_stats.h"

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <string>

#include "engine/runtime/clock.h"

namespace lanecast::apps {

ReplayStats::ReplayStats(double every_s, uint64_t total, const ReplayLive& live, std::function<uint64_t()> slowest)
    : every_ns_(static_cast<uint64_t>(every_s * 1e9)), total_(total), live_(live), slowest_(std::move(slowest)),
      line_(every_s <= 0), start_ns_(clock_ns()) {
  if (every_ns_ > 0) thread_ = std::thread([this] { run(); });
}

ReplayStats::~ReplayStats() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  line_.end();
}

void ReplayStats::run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (uint64_t n = 1;; ++n) {
    // Lines at whole multiples of the interval from the start: a slow line
    // does not push the next ones later.
    const uint64_t target = start_ns_ + n * every_ns_, now = clock_ns();
    const auto due = std::chrono::steady_clock::now() + std::chrono::nanoseconds(target > now ? target - now : 0);
    if (wake_.wait_until(lock, due, [this] { return stop_; })) return;
    show(static_cast<double>(clock_ns() - start_ns_) / 1e9);
  }
}

void ReplayStats::show(double elapsed_s) {
  const uint64_t sent = live_.published.load(std::memory_order_relaxed);
  const double rate = elapsed_s > 0 ? static_cast<double>(sent) / elapsed_s : 0;
  char text[320];
  int used = std::snprintf(text, sizeof text,
                           "replay: %.0f s: %" PRIu64 " of %" PRIu64 " packets (%.1f%%), %.0f msgs/s, send error p50 "
                           "%.1f us p99 %.1f us",
                           elapsed_s, sent, total_, total_ ? 100.0 * static_cast<double>(sent) / static_cast<double>(total_) : 0.0,
                           rate, static_cast<double>(live_.error_p50_ns.load(std::memory_order_relaxed)) / 1e3,
                           static_cast<double>(live_.error_p99_ns.load(std::memory_order_relaxed)) / 1e3);
  if (slowest_ && used > 0 && static_cast<size_t>(used) < sizeof text)
    used += std::snprintf(text + used, sizeof text - used, ", slowest member delivered %" PRIu64, slowest_());
  if (used > 0 && static_cast<size_t>(used) < sizeof text) {
    if (rate > 0 && sent < total_)
      std::snprintf(text + used, sizeof text - used, ", %.0f s left", static_cast<double>(total_ - sent) / rate);
    else if (sent >= total_)
      std::snprintf(text + used, sizeof text - used, ", all sent");
  }
  line_.show(text);
}

}  // namespace lanecast::apps
