// The shape of the multi-lane dual-tree broadcast (algos/multilane.h): two
// binary trees per site that swap halves at their leaves, chained across sites.
//
// One site, n members in site order 0..n-1 (the root excluded): part A is
// members [0, nA), part B is [nA, n), nA = ceil(n/2). Half h (0 = A, 1 = B)
// travels down a heap over all n members: heap A lists part A then part B
// (position j holds member j), heap B lists part B then part A. A heap of n has
// its interior at positions < floor(n/2) = nB <= nA, so the other part's
// members are all leaves of a half's heap: every member is interior in at
// most one heap. Read as trees: tree A (part A) carries half A; the
// positions a leaf of tree A would give its children fall on part B ("the
// leaves of tree A forward A into the nodes of tree B"), and likewise for B.
// Every member receives each half once (one parent per heap) and sends only
// its own part's half, to at most two children.
//
// Lanes: member j with index i in its part (i = j in A, j - nA in B) receives
// half h on lane (i + h + flip) mod 2. Siblings of either heap have
// consecutive indices in one part, or are (last of one part, first of the
// other) when that last index is odd: their lanes differ, so a node with two
// children sends one per lane; its two parents send on different lanes, so
// every member receives on both. The root sends A to member 0 on lane 0 and B
// to the root of heap B on lane 1.
//
// Sites, in chain order: site 0 holds the root's site's other members; every
// later site all of its members. A site of n members has exactly two free
// send slots (2n slots, 2n - 2 edges inside): the feeder of half h passes it
// to the heap-h root of the next site. n even: the last member of part A
// feeds A, the last of part B feeds B (one child each inside); n odd: the last
// member of part A (no child inside) feeds both; n = 0 (the root alone in its
// site): the root feeds both. A site's flip makes the feeders' two lanes
// differ: flip(c+1) = flip(c) + n/2 for even n, flip(c) otherwise.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory_resource>
#include <span>
#include <vector>

#include "algos/types.h"

namespace lanecast::algos::topology {

inline constexpr uint32_t multilane_part_a(uint32_t n) { return (n + 1) / 2; }

// Position of member j in half h's heap, and the member at a position.
inline constexpr uint32_t multilane_position(uint32_t h, uint32_t j, uint32_t n) {
  const uint32_t na = multilane_part_a(n);
  return h == 0 ? j : (j >= na ? j - na : j + (n - na));
}
inline constexpr uint32_t multilane_member(uint32_t h, uint32_t pos, uint32_t n) {
  const uint32_t na = multilane_part_a(n), nb = n - na;
  return h == 0 ? pos : (pos < nb ? na + pos : pos - nb);
}

// The lane (0 or 1) on which member j receives half h.
inline constexpr Lane multilane_lane(uint32_t h, uint32_t j, uint32_t n, uint32_t flip) {
  const uint32_t na = multilane_part_a(n);
  const uint32_t index = j < na ? j : j - na;
  return static_cast<Lane>((index + h + flip) & 1u);
}

// Member j's children (members) in half h's heap into out; returns how many.
inline constexpr uint32_t multilane_children(uint32_t h, uint32_t j, uint32_t n,
                                             std::array<uint32_t, 2>& out) {
  const uint64_t pos = multilane_position(h, j, n);
  uint32_t k = 0;
  for (uint64_t c = 2 * pos + 1; c <= 2 * pos + 2 && c < n; ++c)
    out[k++] = multilane_member(h, static_cast<uint32_t>(c), n);
  return k;
}

// The member that feeds half h to the next site; kNoRank when n == 0 (the root).
inline constexpr uint32_t multilane_feeder(uint32_t h, uint32_t n) {
  if (n == 0) return kNoRank;
  return (n % 2 == 1 || h == 0) ? multilane_part_a(n) - 1 : n - 1;
}

inline constexpr uint32_t multilane_next_flip(uint32_t n, uint32_t flip) {
  return n != 0 && n % 2 == 0 ? (n / 2 + flip) & 1u : flip;
}

// One node's part: what it sends of each half, where, on which lane (0 or 1),
// and from whom it receives each half.
struct MultilanePlace {
  std::array<uint32_t, 2> count{};
  std::array<std::array<Rank, 2>, 2> to{};
  std::array<std::array<Lane, 2>, 2> lane{};
  std::array<Rank, 2> from{kNoRank, kNoRank};  // kNoRank on the root
  std::array<Lane, 2> from_lane{};
  uint32_t site = 0;  // chain position of the node's site
};

// The sites of a group, in chain order, with their members.
class MultilaneLayout {
 public:
  // site_of_rank: empty (one site) or one site id per rank, any ids. The chain
  // starts at the root's site and visits the other ids in increasing order,
  // cyclically after the root's; members follow rank order rotated to start
  // at the root. Throws std::invalid_argument on a size mismatch or a root
  // outside the group. mem: where its tables (and its scratch) come from.
  MultilaneLayout(uint32_t p, Rank root, std::span<const uint32_t> site_of_rank = {},
                  std::pmr::memory_resource* mem = std::pmr::get_default_resource());

  // The most each of a layout's (at most four) requests to its memory
  // resource asks for, for p ranks with or without site_of_rank; nothing is
  // freed before the layout is destroyed. A caller that rounds every request
  // (MachineArena) sums them its own way.
  static std::array<size_t, 4> resource_requests(uint32_t p, bool with_sites);

  // Ranks 0..p-1 with `sites` contiguous blocks of (nearly) equal size:
  // rank r in site floor(r sites / p). Throws when sites is 0 or above p.
  static std::vector<uint32_t> contiguous(uint32_t p, uint32_t sites);

  uint32_t nodes() const { return p_; }
  Rank root() const { return root_; }
  uint32_t sites() const { return static_cast<uint32_t>(sites_.size()); }
  // Throws std::invalid_argument when me is outside the group.
  MultilanePlace place(Rank me) const;

 private:
  struct Site {
    uint32_t first;  // chain position of member 0
    uint32_t count;
    uint32_t flip;
  };
  Rank rank_at(uint32_t k) const;   // chain position -> real rank
  uint32_t chain_of(Rank r) const;  // real rank (not the root) -> chain position
  uint32_t site_at(uint32_t k) const;
  std::pair<Rank, Lane> entry(uint32_t c, uint32_t h) const;   // heap-h root of site c
  Rank feeder_of(uint32_t c, uint32_t h) const;                 // who feeds site c

  uint32_t p_;
  Rank root_;
  std::pmr::vector<Site> sites_;
  std::pmr::vector<Rank> order_;   // chain position -> rank; empty with one site
  std::pmr::vector<uint32_t> chain_;  // rank -> chain position; empty with one site
};

}  // namespace lanecast::algos::topology
