// The chain (Happe & Vinter's "segmented seqtree"), in virtual ranks: 0 -> 1 ->
// ... -> p-1. The root is virtual rank 0 (see Plan::to_virtual).
#pragma once

#include <cstdint>

#include "algos/types.h"

namespace lanecast::algos::topology {

inline constexpr Rank chain_successor(Rank v, uint32_t p) { return v + 1 < p ? v + 1 : kNoRank; }
inline constexpr Rank chain_predecessor(Rank v) { return v == 0 ? kNoRank : v - 1; }

}  // namespace lanecast::algos::topology
