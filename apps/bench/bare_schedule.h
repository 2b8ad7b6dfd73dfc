// The machine's own share of a stream's tail: threads that do nothing but
// follow the stream's schedule - message k due at start + k / rate - on the
// CPUs the stream ran on, each noting how late it got to each due time. A
// thread that spins until its due time is late only when the machine took
// its CPU away (another thread, the kernel, the hypervisor): what is left of
// a stream's percentiles beyond these is the engine's.
#pragma once

#include <cstdint>

namespace lanecast::apps {

struct BareFigures {
  double p50_us = 0, p99_us = 0, p999_us = 0, max_us = 0;
};

// `threads` threads (unpinned: the scheduler spreads them as it spread the
// stream's cores and its publisher), each following `messages` due times at
// `rate_per_s`; the lateness of every one of them, merged.
BareFigures bare_schedule(double rate_per_s, uint64_t messages, uint32_t threads);

}  // namespace lanecast::apps
