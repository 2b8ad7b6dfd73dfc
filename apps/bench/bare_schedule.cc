#include "apps/bench/bare_schedule.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include "apps/bench/log_histogram.h"
#include "lanecast/lanecast.h"

namespace lanecast::apps {
namespace {

BareFigures follow(uint64_t start, double gap_ns, uint64_t messages) {
  LogHistogram h;
  for (uint64_t k = 0; k < messages; ++k) {
    const uint64_t due = start + static_cast<uint64_t>(static_cast<double>(k) * gap_ns);
    uint64_t now = clock_ns();
    while (now < due) now = clock_ns();
    h.add(now - due);
  }
  BareFigures f;
  f.p50_us = static_cast<double>(h.percentile(0.50)) / 1e3;
  f.p99_us = static_cast<double>(h.percentile(0.99)) / 1e3;
  f.p999_us = static_cast<double>(h.percentile(0.999)) / 1e3;
  f.max_us = static_cast<double>(h.max()) / 1e3;
  return f;
}

void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);  // best effort: unpinned, it still measures
}

}  // namespace

BareRun bare_schedule(double rate_per_s, uint64_t messages, const std::vector<int>& cpus) {
  BareRun run;
  if (rate_per_s <= 0 || messages == 0) return run;
  const double gap_ns = 1e9 / rate_per_s;
  run.threads.resize(cpus.size() + 1);
  // Every thread starts from the same time, a little ahead, once all exist.
  std::atomic<uint64_t> start{0};
  std::vector<std::thread> threads;
  for (size_t i = 0; i < cpus.size(); ++i) {
    run.threads[i].cpu = cpus[i];
    threads.emplace_back([&, i] {
      pin(cpus[i]);
      uint64_t s;
      while ((s = start.load(std::memory_order_acquire)) == 0) std::this_thread::yield();
      run.threads[i].figures = follow(s, gap_ns, messages);
    });
  }
  run.threads.back().cpu = -1;
  const uint64_t s = clock_ns() + 2'000'000;  // 2 ms: the threads are pinned and waiting by then
  start.store(s, std::memory_order_release);
  run.threads.back().figures = follow(s, gap_ns, messages);
  for (std::thread& t : threads) t.join();
  for (const BareRun::OnCpu& t : run.threads) {
    run.worst.p50_us = std::max(run.worst.p50_us, t.figures.p50_us);
    run.worst.p99_us = std::max(run.worst.p99_us, t.figures.p99_us);
    run.worst.p999_us = std::max(run.worst.p999_us, t.figures.p999_us);
    run.worst.max_us = std::max(run.worst.max_us, t.figures.max_us);
  }
  return run;
}

}  // namespace lanecast::apps
