// Sequence-number arithmetic modulo 2^32 (RFC 1982 style): a is before b when
// the signed distance b - a is positive.
#pragma once

#include <cstdint>

namespace lanecast::engine::reliable {

inline bool seq_before(uint32_t a, uint32_t b) { return static_cast<int32_t>(a - b) < 0; }
inline uint32_t seq_distance(uint32_t from, uint32_t to) { return to - from; }

}  // namespace lanecast::engine::reliable
