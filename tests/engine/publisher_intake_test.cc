// Publishers on their way from the application to the polling core
// (engine/stream/publisher_intake.h), alone: bounded hand-over that leaves
// a refused publisher with its caller, adoption in order, every adopted one
// told when the streams fail, and nothing leaked (the ASan build checks).
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "engine/stream/publisher_intake.h"

namespace lanecast::engine::stream {
namespace {

std::unique_ptr<PublisherShared> publisher(uint16_t index) {
  auto p = std::make_unique<PublisherShared>();
  p->index = index;
  return p;
}

TEST(PublisherIntakePart, HandedOverInOrderBoundedARefusedOneStaysTheCallers) {
  PublisherIntake in;
  EXPECT_FALSE(in.waiting());
  for (uint16_t i = 0; i < PublisherIntake::kWaiting; ++i) {
    auto p = publisher(i);
    ASSERT_TRUE(in.offer(p));
    EXPECT_EQ(p, nullptr) << "the intake owns it now";
  }
  auto extra = publisher(99);
  EXPECT_FALSE(in.offer(extra));
  ASSERT_NE(extra, nullptr) << "refused: still the caller's";
  EXPECT_TRUE(in.waiting());
  std::vector<uint16_t> order;
  in.adopt([&](PublisherShared& p) { order.push_back(p.index); });
  EXPECT_FALSE(in.waiting());
  ASSERT_EQ(order.size(), PublisherIntake::kWaiting);
  for (uint16_t i = 0; i < order.size(); ++i) EXPECT_EQ(order[i], i);
  EXPECT_TRUE(in.offer(extra)) << "room again once adopted";
}

TEST(PublisherIntakePart, EveryAdoptedPublisherLearnsTheStreamsFailedAndWhy) {
  PublisherIntake in;
  std::vector<PublisherShared*> seen;
  for (uint16_t i = 0; i < 3; ++i) {
    auto p = publisher(i);
    ASSERT_TRUE(in.offer(p));
  }
  in.adopt([&](PublisherShared& p) { seen.push_back(&p); });
  auto late = publisher(7);
  ASSERT_TRUE(in.offer(late));  // not adopted yet: freed with the intake
  in.fail_all(/*error=*/4, /*peer=*/5);
  for (PublisherShared* p : seen) {
    EXPECT_EQ(p->error.load(), 4);
    EXPECT_EQ(p->error_peer.load(), 5u);
  }
}

}  // namespace
}  // namespace lanecast::engine::stream
