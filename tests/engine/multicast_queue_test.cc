// The running broadcast's queue of multicasts (engine/node/multicast_queue.h),
// alone: oldest first, a multicast resumes where its emulation stopped,
// bounded, and wraps around its ring.
#include <gtest/gtest.h>

#include <vector>

#include "engine/node/multicast_queue.h"

namespace lanecast::engine {
namespace {

TEST(MulticastQueuePart, OldestFirstAndAnEmulatedMulticastResumesWhereItStopped) {
  MulticastQueue q(4);
  EXPECT_TRUE(q.empty());
  ASSERT_TRUE(q.push(5, 0));
  ASSERT_TRUE(q.push(6, 1));
  EXPECT_EQ(q.size(), 2u);
  EXPECT_EQ(q.front().segment, 5u);
  EXPECT_EQ(q.front().next_rank, 0u);
  q.front().next_rank = 3;  // copies to ranks 0..2 went, the lane filled
  EXPECT_EQ(q.front().next_rank, 3u) << "the next turn starts at rank 3";
  q.pop();
  EXPECT_EQ(q.front().segment, 6u);
  EXPECT_EQ(q.front().lane, 1u);
  q.pop();
  EXPECT_TRUE(q.empty());
}

TEST(MulticastQueuePart, BoundedAndWrapsAround) {
  MulticastQueue q(3);
  std::vector<uint32_t> got;
  uint32_t next = 0;
  for (int round = 0; round < 5; ++round) {
    while (q.push(next, 0)) ++next;
    EXPECT_EQ(q.size(), 3u) << "full at its capacity";
    got.push_back(q.front().segment);
    q.pop();
    got.push_back(q.front().segment);
    q.pop();
  }
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], i) << "in the order pushed, across the wrap";
  q.clear();
  EXPECT_TRUE(q.empty());
  EXPECT_TRUE(q.push(99, 0));
  EXPECT_EQ(q.front().segment, 99u);
}

}  // namespace
}  // namespace lanecast::engine
