// The compact send queues of tx ports: order preserved, runs merged.
#include <gtest/gtest.h>

#include <vector>

#include "algos/sim/tx_queues.h"

namespace lanecast::algos::sim {
namespace {

bool same(const Send& a, const Send& b) { return a.dst == b.dst && a.seg == b.seg && a.lane == b.lane; }

TEST(TxQueues, FifoKeepsEmissionOrderAcrossStrides) {
  std::vector<Send> in;
  for (SegmentIndex s = 0; s < 5; ++s)
    for (Rank r = 7; r > 0; --r) in.push_back({r, s, 0});  // segment-major, descending ranks
  for (SegmentIndex s = 0; s < 9; ++s) in.push_back({3, s, static_cast<Lane>(s % 2)});  // alternating lanes
  in.push_back({1, 1, 0});
  in.push_back({1, 1, 0});  // a repeat: stride zero
  FifoBacklog b;
  size_t popped = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    b.push(in[i]);
    if (i % 3 == 2) {  // interleave pops with pushes
      ASSERT_FALSE(b.empty());
      EXPECT_TRUE(same(b.pop(), in[popped])) << popped;
      ++popped;
    }
  }
  while (!b.empty()) {
    ASSERT_LT(popped, in.size());
    EXPECT_TRUE(same(b.pop(), in[popped])) << popped;
    ++popped;
  }
  EXPECT_EQ(popped, in.size());
}

TEST(TxQueues, RoundRobinTakesOneFramePerDestinationInTurn) {
  RrPort q;
  for (SegmentIndex s = 0; s < 3; ++s) q.push({1, s, 0});
  for (SegmentIndex s = 0; s < 2; ++s) q.push({2, s, 0});
  q.push({3, 0, 0});
  std::vector<Rank> order;
  std::vector<SegmentIndex> segs_of_1;
  while (!q.empty()) {
    const Send s = q.pop();
    order.push_back(s.dst);
    if (s.dst == 1) segs_of_1.push_back(s.seg);
  }
  EXPECT_EQ(order, (std::vector<Rank>{1, 2, 3, 1, 2, 1}));
  EXPECT_EQ(segs_of_1, (std::vector<SegmentIndex>{0, 1, 2}));
}

}  // namespace
}  // namespace lanecast::algos::sim
