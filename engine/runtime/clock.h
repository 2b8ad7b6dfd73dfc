// The engine's only clock. Polling loops read it once per iteration and pass
// the value down: everything below takes time as an argument.
#pragma once

#include <cstdint>

namespace lanecast::engine {

// Nanoseconds on a monotonic clock (TSC-based; calibrated at first use).
uint64_t now_ns();
// CLOCK_MONOTONIC in ns: one clock for every process of a host (now_ns()
// scales the TSC per process). Streams stamp their messages with it, so a
// member in another process of the same host measures latency on it.
uint64_t host_ns();

}  // namespace lanecast::engine
