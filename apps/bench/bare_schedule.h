// The machine's own share of a stream's tail: a thread that does nothing
// but follow the stream's schedule - message k due at start + k / rate - on
// the CPUs the stream ran on, noting how late it got to each due time. A
// thread that spins until its due time is late only when the machine took
// its CPU away (another thread, the kernel, the hypervisor): what is left of
// a stream's percentiles beyond these is the engine's.
#pragma once

#include <cstdint>

namespace lanecast::apps {

struct BareFigures {
  double p50_us = 0, p99_us = 0, p999_us = 0, max_us = 0;
};

// Follows `messages` due times at `rate_per_s` on the calling thread (the
// publisher's, in the stream bench) and returns how late it was.
BareFigures bare_schedule(double rate_per_s, uint64_t messages);

}  // namespace lanecast::apps
