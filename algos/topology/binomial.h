// The binomial tree of MPICH and Open MPI (MPIR_Bcast_intra_binomial,
// ompi_coll_base_bcast_intra_binomial), in virtual ranks (the root is 0; see
// Plan::to_virtual).
//
// Virtual rank v > 0 has the parent v with its lowest set bit cleared; its
// children are v + 2^k for every 2^k below v's lowest set bit (for the root:
// below the smallest power of two >= p) with v + 2^k < p. The subtree of v is
// [v, min(v + lowbit(v), p)).
//
// Children are served largest subtree first. MPICH serves them by decreasing
// mask, which is the same order except when p is not a power of two and the
// highest child's subtree is cut by p: binomial_children() then moves that child
// behind the full subtrees larger than its own. This never costs a round.
#pragma once

#include <array>
#include <bit>
#include <cstdint>

#include "algos/types.h"

namespace lanecast::algos::topology {

inline constexpr uint32_t kMaxBinomialChildren = 32;
using BinomialChildren = std::array<Rank, kMaxBinomialChildren>;

inline constexpr Rank binomial_parent(Rank v) { return v == 0 ? kNoRank : (v & (v - 1)); }

// One past the last virtual rank of v's subtree.
inline constexpr Rank binomial_subtree_end(Rank v, uint32_t p) {
  if (v == 0) return p;
  const uint64_t end = uint64_t{v} + (v & (~v + 1));
  return end < p ? static_cast<Rank>(end) : p;
}

// v's children, largest subtree first (ties: larger mask first), into `out`;
// returns how many (at most ceil(log2 p)).
inline constexpr uint32_t binomial_children(Rank v, uint32_t p, BinomialChildren& out) {
  if (p <= 1 || v >= p) return 0;
  uint32_t mask = v == 0 ? (std::bit_ceil(p) >> 1) : ((v & (~v + 1)) >> 1);
  uint32_t n = 0;
  for (; mask != 0; mask >>= 1) {
    if (uint64_t{v} + mask >= p) continue;
    const Rank c = v + mask;
    // Insertion by subtree size: only the first child found can be cut short.
    const uint32_t size = binomial_subtree_end(c, p) - c;
    uint32_t at = n;
    while (at > 0 && binomial_subtree_end(out[at - 1], p) - out[at - 1] < size) {
      out[at] = out[at - 1];
      --at;
    }
    out[at] = c;
    ++n;
  }
  return n;
}

}  // namespace lanecast::algos::topology
