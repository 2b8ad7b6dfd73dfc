// The dimension-ordered hypercube broadcast of Figueira ("Using a Hypercube
// Algorithm for Broadcasting in Internet-Based Clusters", S. M. Figueira,
// PDPTA 2000), in virtual ids (the root is 0): at step i every id v < 2^i that
// holds the message sends it to v XOR 2^i. As a tree: v's parent is v with its
// highest set bit cleared; its children are v + 2^i for every i from
// bit_width(v) up, in step order, while < p. Groups of any size: ids >= p are
// simply absent, and every id < p still has its parent below it.
#pragma once

#include <array>
#include <bit>
#include <cstdint>

#include "algos/types.h"

namespace lanecast::algos::topology {

using HypercubeChildren = std::array<Rank, 32>;

inline constexpr Rank hypercube_parent(Rank v) {
  return v == 0 ? kNoRank : v & ~(Rank{1} << (std::bit_width(v) - 1));
}

// v's children in step order into out; returns how many.
inline constexpr uint32_t hypercube_children(Rank v, uint32_t p, HypercubeChildren& out) {
  uint32_t n = 0;
  for (uint32_t i = static_cast<uint32_t>(std::bit_width(v)); i < 32; ++i) {
    const uint64_t c = uint64_t{v} + (uint64_t{1} << i);
    if (c >= p) break;
    out[n++] = static_cast<Rank>(c);
  }
  return n;
}

}  // namespace lanecast::algos::topology
