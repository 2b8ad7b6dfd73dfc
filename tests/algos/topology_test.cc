// Topology shapes: the binomial tree and the chain, as pure functions.
#include <gtest/gtest.h>

#include <vector>

#include "algos/topology/binomial.h"
#include "algos/topology/chain.h"

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

}  // namespace
}  // namespace lanecast::algos::topology
