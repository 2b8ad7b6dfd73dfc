#include "engine/clock.h"

#include <rte_cycles.h>

namespace lanecast::engine {
namespace {

struct TscScale {
  // ns = cycles * mult >> 32, exact enough for timeouts and benchmarks.
  uint64_t mult;
  TscScale() {
    const uint64_t hz = rte_get_tsc_hz();
    mult = hz ? static_cast<uint64_t>((1'000'000'000.0 * 4294967296.0) / static_cast<double>(hz))
              : 1ull << 32;
  }
};

}  // namespace

uint64_t now_ns() {
  static const TscScale scale;
  __extension__ using u128 = unsigned __int128;  // the product needs 96 bits
  const u128 c = rte_get_tsc_cycles();
  return static_cast<uint64_t>((c * scale.mult) >> 32);
}

}  // namespace lanecast::engine
