#include "apps/bench/bare_schedule.h"

#include "apps/bench/log_histogram.h"
#include "lanecast/lanecast.h"

namespace lanecast::apps {

BareFigures bare_schedule(double rate_per_s, uint64_t messages) {
  BareFigures f;
  if (rate_per_s <= 0 || messages == 0) return f;
  const double gap_ns = 1e9 / rate_per_s;
  LogHistogram h;
  const uint64_t start = clock_ns();
  for (uint64_t k = 0; k < messages; ++k) {
    const uint64_t due = start + static_cast<uint64_t>(static_cast<double>(k) * gap_ns);
    uint64_t now = clock_ns();
    while (now < due) now = clock_ns();
    h.add(now - due);
  }
  f.p50_us = static_cast<double>(h.percentile(0.50)) / 1e3;
  f.p99_us = static_cast<double>(h.percentile(0.99)) / 1e3;
  f.p999_us = static_cast<double>(h.percentile(0.999)) / 1e3;
  f.max_us = static_cast<double>(h.max()) / 1e3;
  return f;
}

}  // namespace lanecast::apps
