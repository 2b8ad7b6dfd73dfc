// Topology shapes: the binomial tree and the chain, as pure functions.
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "algos/topology/binomial.h"
#include "algos/topology/chain.h"
#include "algos/topology/pieces.h"
#include "algos/topology/two_trees.h"

namespace lanecast::algos::topology {
namespace {

std::vector<Rank> children_of(Rank v, uint32_t p) {
  BinomialChildren kids{};
  const uint32_t n = binomial_children(v, p, kids);
  return std::vector<Rank>(kids.begin(), kids.begin() + n);
}

TEST(Binomial, KnownTreeOfEight) {
  EXPECT_EQ(children_of(0, 8), (std::vector<Rank>{4, 2, 1}));
  EXPECT_EQ(children_of(4, 8), (std::vector<Rank>{6, 5}));
  EXPECT_EQ(children_of(2, 8), (std::vector<Rank>{3}));
  EXPECT_EQ(children_of(6, 8), (std::vector<Rank>{7}));
  EXPECT_TRUE(children_of(7, 8).empty());
  EXPECT_EQ(binomial_parent(6), 4u);
  EXPECT_EQ(binomial_parent(5), 4u);
  EXPECT_EQ(binomial_parent(4), 0u);
  EXPECT_EQ(binomial_parent(0), kNoRank);
}

TEST(Binomial, NonPowerOfTwoIsCut) {
  EXPECT_EQ(children_of(0, 5), (std::vector<Rank>{2, 4, 1}));  // {2,3} before {4}
  EXPECT_EQ(children_of(0, 6), (std::vector<Rank>{4, 2, 1}));  // a tie keeps MPI order
  EXPECT_EQ(children_of(0, 13), (std::vector<Rank>{8, 4, 2, 1}));
  EXPECT_EQ(children_of(0, 11), (std::vector<Rank>{4, 8, 2, 1}));
  EXPECT_TRUE(children_of(4, 5).empty());
  EXPECT_EQ(children_of(0, 1), std::vector<Rank>{});
  EXPECT_EQ(children_of(0, 2), std::vector<Rank>{1});
}

// Every rank but the root has exactly one parent that lists it as a child,
// children come largest subtree first, and subtrees partition the group.
TEST(Binomial, ParentsChildrenAndSubtreesAgree) {
  for (uint32_t p = 1; p <= 70; ++p) {
    std::vector<int> listed(p, 0);
    for (Rank v = 0; v < p; ++v) {
      const auto kids = children_of(v, p);
      uint32_t covered = 1, prev = UINT32_MAX;
      for (Rank c : kids) {
        ++listed[c];
        EXPECT_EQ(binomial_parent(c), v);
        const uint32_t size = binomial_subtree_end(c, p) - c;
        EXPECT_LE(size, prev) << "p=" << p << " v=" << v;
        prev = size;
        covered += size;
      }
      EXPECT_EQ(covered, binomial_subtree_end(v, p) - v) << "p=" << p << " v=" << v;
    }
    EXPECT_EQ(listed[0], 0);
    for (Rank v = 1; v < p; ++v) EXPECT_EQ(listed[v], 1) << "p=" << p << " v=" << v;
  }
}

TEST(Chain, SuccessorsAndPredecessors) {
  EXPECT_EQ(chain_successor(0, 1), kNoRank);
  EXPECT_EQ(chain_successor(0, 3), 1u);
  EXPECT_EQ(chain_successor(2, 3), kNoRank);
  EXPECT_EQ(chain_predecessor(0), kNoRank);
  EXPECT_EQ(chain_predecessor(2), 1u);
}

TEST(Heap, ChildrenAndParents) {
  EXPECT_EQ(heap_left(0, 3), 1u);
  EXPECT_EQ(heap_right(0, 3), 2u);
  EXPECT_EQ(heap_right(0, 2), kNoRank);
  EXPECT_EQ(heap_left(3, 8), 7u);
  EXPECT_EQ(heap_right(3, 8), kNoRank);
  EXPECT_EQ(heap_parent(7), 3u);
  EXPECT_EQ(heap_parent(0), kNoRank);
}

// Each tree spans every receiver once; parents agree with children; every
// receiver has at most two children counting both trees.
TEST(TwoTrees, SpanningAndAtMostTwoChildren) {
  for (uint32_t p = 1; p <= 70; ++p) {
    std::vector<int> kids_total(p, 0);
    for (uint32_t t = 0; t < 2; ++t) {
      std::vector<int> listed(p, 0);
      for (Rank v = 0; v < p; ++v) {
        std::array<Rank, 2> kids{};
        const uint32_t n = two_tree_children(t, v, p, kids);
        if (v != 0) kids_total[v] += n;
        for (uint32_t i = 0; i < n; ++i) {
          ASSERT_LT(kids[i], p);
          ASSERT_NE(kids[i], 0u);
          ++listed[kids[i]];
          EXPECT_EQ(two_tree_parent(t, kids[i], p), v) << "p=" << p << " t=" << t;
        }
      }
      for (Rank v = 1; v < p; ++v) EXPECT_EQ(listed[v], 1) << "p=" << p << " t=" << t << " v=" << v;
    }
    for (Rank v = 1; v < p; ++v) EXPECT_LE(kids_total[v], 2) << "p=" << p << " v=" << v;
  }
}

TEST(TwoTrees, KnownSevenReceivers) {
  std::array<Rank, 2> k{};
  EXPECT_EQ(two_tree_children(0, 0, 8, k), 1u);
  EXPECT_EQ(k[0], 1u);
  EXPECT_EQ(two_tree_children(1, 0, 8, k), 1u);
  EXPECT_EQ(k[0], 7u);
  ASSERT_EQ(two_tree_children(0, 1, 8, k), 2u);  // tree 0: 1 -> 2, 3
  EXPECT_EQ(k[0], 2u);
  EXPECT_EQ(k[1], 3u);
  ASSERT_EQ(two_tree_children(1, 7, 8, k), 2u);  // tree 1: 7 -> 6, 5
  EXPECT_EQ(k[0], 6u);
  EXPECT_EQ(k[1], 5u);
  EXPECT_EQ(two_tree_children(1, 1, 8, k), 0u);  // 1 is a leaf of tree 1
  EXPECT_EQ(two_tree_children(0, 7, 8, k), 0u);  // 7 is a leaf of tree 0
}

// Pieces tile the segments, differ by at most one, and piece_of inverts them.
TEST(Pieces, TileAndInvert) {
  for (uint32_t k = 1; k <= 40; ++k)
    for (uint32_t m = 1; m <= 100; ++m) {
      EXPECT_EQ(piece_begin(0, k, m), 0u);
      EXPECT_EQ(piece_begin(k, k, m), m);
      for (uint32_t c = 0; c < k; ++c) {
        const uint32_t len = piece_begin(c + 1, k, m) - piece_begin(c, k, m);
        EXPECT_TRUE(len == m / k || len == m / k + 1) << "k=" << k << " m=" << m << " c=" << c;
        for (SegmentIndex s = piece_begin(c, k, m); s < piece_begin(c + 1, k, m); ++s)
          ASSERT_EQ(piece_of(s, k, m), c) << "k=" << k << " m=" << m << " s=" << s;
      }
    }
}

}  // namespace
}  // namespace lanecast::algos::topology
