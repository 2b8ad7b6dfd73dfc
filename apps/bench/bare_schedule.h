// The machine's own share of a stream's tail: threads that do nothing but
// follow the stream's schedule - message k due at start + k / rate - on the
// CPUs the stream ran on, noting how late each got to each due time. A
// thread that spins until its due time is late only when the machine took
// its CPU away (another thread, a kernel thread, the hypervisor): what is
// left of a stream's percentiles beyond these is the engine's.
//
// One thread per CPU, all at once: the stream kept every one of them busy
// (the polling cores and the publisher's thread spin), so a kernel thread
// that wakes finds no idle CPU and takes one of theirs - on this 2-CPU test
// machine a memory-monitoring kernel thread (kdamond) takes a polling core's
// CPU for 1.2-1.8 ms twice a second. A single bare thread beside idle
// polling cores would never meet it: the kernel would run it on an idle CPU.
#pragma once

#include <cstdint>
#include <vector>

namespace lanecast::apps {

struct BareFigures {
  double p50_us = 0, p99_us = 0, p999_us = 0, max_us = 0;
};

struct BareRun {
  struct OnCpu {
    int cpu;  // -1: the calling thread, wherever the kernel runs it
    BareFigures figures;
  };
  std::vector<OnCpu> threads;
  BareFigures worst;  // each percentile's largest over the threads
};

// Follows `messages` due times at `rate_per_s` on one thread pinned to each
// of `cpus` (the polling cores') and on the calling thread (the publisher's,
// unpinned as it was in the stream), all starting together.
BareRun bare_schedule(double rate_per_s, uint64_t messages, const std::vector<int>& cpus);

}  // namespace lanecast::apps
