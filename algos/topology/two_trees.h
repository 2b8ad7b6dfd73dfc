// The two binary trees of Happe & Vinter's segmented bintree (H. H. Happe,
// B. Vinter, "Improving TCP/IP Multicasting with Message Segmentation",
// Communicating Process Architectures 2005), in virtual ranks (root 0).
//
// Both trees span the n = p - 1 receivers, as heaps over two orders of them:
// tree 0 over 1, 2, ..., n (heap position i holds rank i + 1) and tree 1 over
// the reverse n, n-1, ..., 1 (position i holds n - i). A heap of n nodes has its
// floor(n/2) interior nodes at the front and its ceil(n/2) leaves at the back,
// so every receiver is interior in at most one tree: at most two children
// counting both trees, at most four peers (two parents, two children). The root
// feeds the heap root of each tree: rank 1 in tree 0, rank n in tree 1.
#pragma once

#include <array>
#include <cstdint>

#include "algos/topology/binary.h"
#include "algos/types.h"

namespace lanecast::algos::topology {

// Heap position of receiver v (1..p-1) in tree t, and back.
inline constexpr uint32_t two_tree_position(uint32_t t, Rank v, uint32_t p) {
  return t == 0 ? v - 1 : (p - 1) - v;
}
inline constexpr Rank two_tree_rank(uint32_t t, uint32_t pos, uint32_t p) {
  return t == 0 ? pos + 1 : (p - 1) - pos;
}

// v's children in tree t (0 or 1) into out; returns how many (0..2).
inline constexpr uint32_t two_tree_children(uint32_t t, Rank v, uint32_t p,
                                            std::array<Rank, 2>& out) {
  if (p < 2 || v >= p) return 0;
  if (v == 0) {
    out[0] = two_tree_rank(t, 0, p);
    return 1;
  }
  const uint32_t n = p - 1, pos = two_tree_position(t, v, p);
  uint32_t k = 0;
  if (const Rank l = heap_left(pos, n); l != kNoRank) out[k++] = two_tree_rank(t, l, p);
  if (const Rank r = heap_right(pos, n); r != kNoRank) out[k++] = two_tree_rank(t, r, p);
  return k;
}

inline constexpr Rank two_tree_parent(uint32_t t, Rank v, uint32_t p) {
  if (v == 0 || v >= p) return kNoRank;
  const Rank pos = two_tree_position(t, v, p);
  return pos == 0 ? 0 : two_tree_rank(t, heap_parent(pos), p);
}

}  // namespace lanecast::algos::topology
