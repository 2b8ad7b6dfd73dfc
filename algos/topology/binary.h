// The binary tree of a pipelined binary-tree broadcast (Open MPI's "bintree",
// ompi_coll_base_topo_build_tree with fanout 2), in virtual ranks laid out as a
// heap: v's children are 2v + 1 and 2v + 2 when < p; its parent (v - 1) / 2.
#pragma once

#include <cstdint>

#include "algos/types.h"

namespace lanecast::algos::topology {

inline constexpr Rank heap_parent(Rank v) { return v == 0 ? kNoRank : (v - 1) / 2; }
inline constexpr Rank heap_left(Rank v, uint32_t n) {
  return uint64_t{v} * 2 + 1 < n ? v * 2 + 1 : kNoRank;
}
inline constexpr Rank heap_right(Rank v, uint32_t n) {
  return uint64_t{v} * 2 + 2 < n ? v * 2 + 2 : kNoRank;
}

}  // namespace lanecast::algos::topology
