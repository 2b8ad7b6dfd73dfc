#include "apps/bench/bare_schedule.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "apps/bench/log_histogram.h"
#include "lanecast/lanecast.h"

namespace lanecast::apps {

BareFigures bare_schedule(double rate_per_s, uint64_t messages, uint32_t threads) {
  BareFigures f;
  if (rate_per_s <= 0 || messages == 0 || threads == 0) return f;
  const double gap_ns = 1e9 / rate_per_s;
  std::vector<LogHistogram> hists(threads);
  std::atomic<uint32_t> ready{0};
  std::atomic<uint64_t> start{0};
  std::vector<std::thread> pool;
  for (uint32_t t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      // All threads start on one schedule, as the stream's cores share one.
      if (ready.fetch_add(1) + 1 == threads) start.store(clock_ns() + 1'000'000, std::memory_order_release);
      uint64_t s;
      while ((s = start.load(std::memory_order_acquire)) == 0) std::this_thread::yield();
      LogHistogram& h = hists[t];
      for (uint64_t k = 0; k < messages; ++k) {
        const uint64_t due = s + static_cast<uint64_t>(static_cast<double>(k) * gap_ns);
        uint64_t now = clock_ns();
        while (now < due) now = clock_ns();
        h.add(now - due);
      }
    });
  for (auto& th : pool) th.join();
  LogHistogram all;
  for (const auto& h : hists) all.merge(h);
  f.p50_us = static_cast<double>(all.percentile(0.50)) / 1e3;
  f.p99_us = static_cast<double>(all.percentile(0.99)) / 1e3;
  f.p999_us = static_cast<double>(all.percentile(0.999)) / 1e3;
  f.max_us = static_cast<double>(all.max()) / 1e3;
  return f;
}

}  // namespace lanecast::apps
