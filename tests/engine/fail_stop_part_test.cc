// The fail-stop part alone (engine/node/fail_stop.h), without a node: what
// it decides from what it is told, what it says is due, and what it counts.
// fail_stop_test.cc runs it inside whole groups.
#include <gtest/gtest.h>

#include <vector>

#include "engine/node/fail_stop.h"

namespace lanecast::engine {
namespace {

std::vector<algos::Rank> due(const FailStop& f) { return {f.due().begin(), f.due().end()}; }

TEST(FailStopPart, AGroupThatIsNotFailStopNeverBreaks) {
  FailStop::Counters k;
  FailStop f(false, 4, 1, k);
  EXPECT_FALSE(f.saw(3, OpError::PeerSilent, 2));
  wire::FailedBody b{};
  b.culprit = 2;
  EXPECT_FALSE(f.heard(b, 0));
  f.sent_after_broken(0, 5'000'000);
  EXPECT_FALSE(f.broken());
  EXPECT_TRUE(f.due().empty());
  EXPECT_EQ(k.rx_notices.get(), 1u);  // heard, counted, not believed
}

TEST(FailStopPart, TheFirstFailureBreaksTheGroupAndEveryoneButTheCulpritIsToBeTold) {
  FailStop::Counters k;
  FailStop f(true, 5, 1, k);
  EXPECT_FALSE(f.saw(7, OpError::None, 3));  // a broadcast that completed breaks nothing
  EXPECT_TRUE(f.saw(7, OpError::PeerSilent, 3));
  EXPECT_TRUE(f.broken());
  EXPECT_EQ(due(f), (std::vector<algos::Rank>{0, 2, 4}));
  EXPECT_EQ(f.verdict().op, 7u);
  EXPECT_EQ(f.verdict().culprit, 3u);
  EXPECT_EQ(f.verdict().reporter, 1u);
  EXPECT_FALSE(f.saw(8, OpError::PeerSilent, 4));  // once
  EXPECT_EQ(f.verdict().culprit, 3u);
  const wire::FailedBody b = f.notice();
  EXPECT_EQ(b.op, 7u);
  EXPECT_EQ(b.culprit, 3u);
  EXPECT_EQ(b.reporter, 1u);
  EXPECT_EQ(b.error, static_cast<uint8_t>(OpError::PeerSilent));
  f.told(2);  // the transport had room for two
  EXPECT_EQ(due(f), (std::vector<algos::Rank>{4}));
  f.told(1);
  EXPECT_TRUE(f.due().empty());
  EXPECT_EQ(k.tx_notices.get(), 3u);
}

TEST(FailStopPart, ANoticeFromTheWireNamesOnlyMembersAndKnownErrors) {
  FailStop::Counters k;
  FailStop f(true, 4, 0, k);
  wire::FailedBody b{};
  b.op = 9;
  b.culprit = 4000;   // no such member
  b.reporter = 77;    // nor this
  b.error = 250;      // no such error
  EXPECT_TRUE(f.heard(b, 2));
  EXPECT_EQ(f.verdict().culprit, algos::kNoRank);
  EXPECT_EQ(f.verdict().reporter, 2u);  // the sender, then
  EXPECT_EQ(f.verdict().error, OpError::Internal);
  EXPECT_EQ(due(f), (std::vector<algos::Rank>{1, 2, 3}));
  EXPECT_FALSE(f.heard(b, 3));  // the group is broken already: nothing new
  EXPECT_EQ(k.rx_notices.get(), 2u);
}

TEST(FailStopPart, APeerThatStillSendsIsToldAgainAtMostOnceAMillisecondAndTheQueueStaysBounded) {
  FailStop::Counters k;
  FailStop f(true, 3, 0, k);
  ASSERT_TRUE(f.saw(1, OpError::PeerSilent, 2));
  f.told(f.due().size());
  f.sent_after_broken(1, 10'000'000);
  f.sent_after_broken(1, 10'500'000);  // within the millisecond: counted, not queued
  EXPECT_EQ(due(f), (std::vector<algos::Rank>{1}));
  f.sent_after_broken(1, 11'000'000);
  f.sent_after_broken(1, 12'000'000);
  f.sent_after_broken(1, 13'000'000);
  EXPECT_EQ(f.due().size(), 3u);  // bounded by the group's size: never grows past its reserve
  f.sent_after_broken(1, 14'000'000);
  EXPECT_EQ(f.due().size(), 3u);
  f.sent_after_broken(99, 20'000'000);  // a rank outside the group: counted, nobody told
  EXPECT_EQ(f.due().size(), 3u);
  EXPECT_EQ(k.rx_after_broken.get(), 7u);
}

}  // namespace
}  // namespace lanecast::engine
