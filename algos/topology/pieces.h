// Cutting m segments into k contiguous pieces with integer boundaries: piece c
// is [floor(c m / k), floor((c + 1) m / k)) (Juhasz's floor((i-1) n / p) ..
// floor(i n / p), in segments). Pieces differ in length by at most one segment;
// when m < k some are empty.
#pragma once

#include <algorithm>
#include <cstdint>

#include "algos/types.h"

namespace lanecast::algos::topology {

inline constexpr SegmentIndex piece_begin(uint32_t c, uint32_t k, uint32_t m) {
  return static_cast<SegmentIndex>(uint64_t{c} * m / k);
}

// The piece that holds segment `seg` (< m).
inline constexpr uint32_t piece_of(SegmentIndex seg, uint32_t k, uint32_t m) {
  // The largest c with floor(c m / k) <= seg, i.e. c m < (seg + 1) k.
  const uint64_t c = ((uint64_t{seg} + 1) * k - 1) / m;
  return static_cast<uint32_t>(std::min<uint64_t>(c, k - 1));
}

}  // namespace lanecast::algos::topology
