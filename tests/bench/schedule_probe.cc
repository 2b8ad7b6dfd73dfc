// The yardstick of replay's timing: a bare thread, no engine, that waits for
// the same schedule as `lanecast replay --speed 1` - a due time every
// --gap-us, against absolute time, spinning the last stretch - pinned to a
// CPU, and prints how late it was at each due time (p50, p99, max). On a
// machine where even this thread loses its CPU (a virtual machine's timer
// ticks, other work), no sender can be more punctual than this.
//
//   schedule_probe [--cpu C] [--gap-us G] [--count N]
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

uint64_t now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(t.tv_nsec);
}

}  // namespace

int main(int argc, char** argv) {
  int cpu = -1;
  double gap_us = 150;
  uint64_t count = 5000;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--cpu") cpu = std::atoi(argv[i + 1]);
    else if (k == "--gap-us") gap_us = std::atof(argv[i + 1]);
    else if (k == "--count") count = std::strtoull(argv[i + 1], nullptr, 10);
    else {
      std::fprintf(stderr, "usage: schedule_probe [--cpu C] [--gap-us G] [--count N]\n");
      return 2;
    }
  }
  if (cpu >= 0) {
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    if (pthread_setaffinity_np(pthread_self(), sizeof s, &s) != 0) std::fprintf(stderr, "cannot pin to CPU %d\n", cpu);
  }
  std::vector<uint64_t> late(count);
  const uint64_t start = now_ns() + 200'000;
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t due = start + static_cast<uint64_t>(static_cast<double>(i) * gap_us * 1e3);
    uint64_t t;
    while ((t = now_ns()) < due) {
      if (due - t > 250'000) {
        timespec nap{0, static_cast<long>(due - t - 150'000)};
        nanosleep(&nap, nullptr);
      }
    }
    late[i] = t - due;
  }
  std::sort(late.begin(), late.end());
  auto at = [&](double q) { return static_cast<double>(late[std::min(count - 1, static_cast<uint64_t>(q * count))]) / 1e3; };
  std::printf("schedule_probe: cpu %d, %llu due times %.0f us apart: late p50 %.1f us, p99 %.1f us, max %.1f us; "
              "%.2f%% more than 20 us late\n",
              cpu, static_cast<unsigned long long>(count), gap_us, at(0.5), at(0.99), late.back() / 1e3,
              100.0 * static_cast<double>(late.end() - std::upper_bound(late.begin(), late.end(), 20'000)) /
                  static_cast<double>(count));
  return 0;
}
