// The engine's only clock. Polling loops read it once per iteration and pass
// the value down: everything below takes time as an argument.
#pragma once

#include <cstdint>

namespace lanecast::engine {

// Nanoseconds on a monotonic clock (TSC-based; calibrated at first use).
uint64_t now_ns();

}  // namespace lanecast::engine
