// The data the commands broadcast: a different pattern for every (seed,
// size, iteration), which every member can compute, so each one checks every
// byte it received without a copy of the root's buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace lanecast::apps {

// The pattern's seed for one broadcast of a schedule.
inline uint64_t pattern_seed(uint64_t seed, uint64_t size, uint64_t iteration) {
  return seed * 1'000'003 + size * 31 + iteration;
}
void fill_pattern(std::span<std::byte> b, uint64_t seed);
// The offset of the first byte that differs from the pattern, or b.size().
size_t check_pattern(std::span<const std::byte> b, uint64_t seed);

}  // namespace lanecast::apps
