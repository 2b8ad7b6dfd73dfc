#include "engine/runtime/clock.h"

#include <rte_cycles.h>
#include <time.h>

namespace lanecast::engine {

uint64_t host_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

namespace {

// The TSC's rate: DPDK's once its environment started; before that (a
// caller timing its own start-up) measured here against the kernel's clock
// over 20 ms, so the scale fixed at the first call is never a guess.
uint64_t tsc_hz() {
  if (const uint64_t hz = rte_get_tsc_hz()) return hz;
  const uint64_t c0 = rte_get_tsc_cycles(), t0 = host_ns();
  timespec nap{0, 20'000'000};
  nanosleep(&nap, nullptr);
  const uint64_t c1 = rte_get_tsc_cycles(), t1 = host_ns();
  if (t1 <= t0 || c1 <= c0) return 1'000'000'000;  // no usable TSC: 1 cycle per ns
  return static_cast<uint64_t>(static_cast<double>(c1 - c0) * 1e9 / static_cast<double>(t1 - t0));
}

struct TscScale {
  // ns = cycles * mult >> 32, exact enough for timeouts and benchmarks.
  uint64_t mult;
  TscScale() : mult(static_cast<uint64_t>((1'000'000'000.0 * 4294967296.0) / static_cast<double>(tsc_hz()))) {}
};

}  // namespace

uint64_t now_ns() {
  static const TscScale scale;
  __extension__ using u128 = unsigned __int128;  // the product needs 96 bits
  const u128 c = rte_get_tsc_cycles();
  return static_cast<uint64_t>((c * scale.mult) >> 32);
}

}  // namespace lanecast::engine
