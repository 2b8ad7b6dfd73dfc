// The acks a member owes (engine/reliable/ack_schedule.h), alone: when each
// falls due, that a refused send waits for the next turn, and that no ack
// is sent twice or forgotten. Time is given, not read.
#include <gtest/gtest.h>

#include <vector>

#include "engine/reliable/ack_schedule.h"

namespace lanecast::engine::reliable {
namespace {

constexpr uint64_t kDelay = 50'000;

// The channels acked by one send_due, in order; `room` acks at most.
std::vector<uint32_t> due(AckSchedule& a, uint64_t now, size_t room = 100) {
  std::vector<uint32_t> sent;
  a.send_due(now, [&](uint32_t ch) {
    if (sent.size() == room) return false;
    sent.push_back(ch);
    return true;
  });
  return sent;
}

TEST(AckSchedule, AQuietChannelIsAckedAfterTheDelayNotBefore) {
  AckSchedule a(4, 8, kDelay);
  a.accepted(2, false, true, 1000);
  EXPECT_FALSE(a.urgent());
  EXPECT_EQ(a.next_deadline(), 1000 + kDelay);
  EXPECT_TRUE(due(a, 1000 + kDelay - 1).empty());
  EXPECT_EQ(due(a, 1000 + kDelay), (std::vector<uint32_t>{2}));
  EXPECT_TRUE(due(a, 10 * kDelay).empty());  // once
  EXPECT_EQ(a.next_deadline(), UINT64_MAX);
  EXPECT_EQ(a.unacked(2), 0u);
}

TEST(AckSchedule, EveryNthFrameAGapOrTheSendersAskAreAckedAtOnce) {
  AckSchedule a(4, 3, kDelay);
  a.accepted(1, false, true, 0);
  a.accepted(1, false, true, 0);
  EXPECT_FALSE(a.urgent());
  a.accepted(1, false, true, 0);  // the third
  EXPECT_TRUE(a.urgent());
  a.accepted(0, false, /*in_order=*/false, 0);  // past a gap
  a.accepted(3, /*urgent=*/true, true, 0);
  EXPECT_EQ(due(a, 0), (std::vector<uint32_t>{1, 0, 3}));
  // Channel 1's delayed entry from its first frame is stale: not sent again.
  EXPECT_TRUE(due(a, kDelay).empty());
}

TEST(AckSchedule, AckNowTwiceQueuesOnceAndARefusedSendWaitsItsTurn) {
  AckSchedule a(4, 8, kDelay);
  a.ack_now(2);
  a.ack_now(2);
  a.ack_now(0);
  EXPECT_EQ(due(a, 0, /*room=*/1), (std::vector<uint32_t>{2}));  // no room for channel 0 now
  EXPECT_TRUE(a.urgent());
  EXPECT_EQ(due(a, 0), (std::vector<uint32_t>{0}));
  EXPECT_FALSE(a.urgent());
  a.accepted(1, false, true, 10);
  a.accepted(3, false, true, 20);
  EXPECT_EQ(due(a, 20 + kDelay, /*room=*/1), (std::vector<uint32_t>{1}));
  EXPECT_EQ(a.next_deadline(), 20 + kDelay);  // channel 3 still waits, not lost
  EXPECT_EQ(due(a, 20 + kDelay), (std::vector<uint32_t>{3}));
}

TEST(AckSchedule, EveryChannelDelayedAtOnceFitsWhatWasReserved) {
  constexpr uint32_t kChannels = 1000;
  AckSchedule a(kChannels, 8, kDelay);
  for (uint32_t ch = 0; ch < kChannels; ++ch) a.accepted(ch, false, true, ch);
  for (uint32_t ch = 0; ch < kChannels; ++ch) a.accepted(ch, false, true, ch);  // already delayed: no second entry
  EXPECT_FALSE(a.urgent());
  const std::vector<uint32_t> sent = due(a, kChannels + kDelay, kChannels);
  ASSERT_EQ(sent.size(), kChannels);
  for (uint32_t ch = 0; ch < kChannels; ++ch) EXPECT_EQ(sent[ch], ch);
}

}  // namespace
}  // namespace lanecast::engine::reliable
