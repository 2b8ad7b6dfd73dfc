// Basic vocabulary shared by every algorithm, executor and the engine.
// algos/ is pure: the C++ standard library only (docs/architecture.md).
#pragma once

#include <cstdint>

namespace lanecast::algos {

using Rank = uint32_t;          // position of a node in the group, 0..p-1
using Lane = uint16_t;          // a (port, queue) pair of a node; 0..lanes-1
using SegmentIndex = uint32_t;  // index of a segment within one message

inline constexpr Rank kNoRank = UINT32_MAX;

}  // namespace lanecast::algos
