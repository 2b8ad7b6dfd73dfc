// A node's transport (engine/node/channels.h), alone: the order owed sends
// go in, flight slabs lent and taken back, lanes that fill, items let go,
// acks, timeouts, and what a failed broadcast or failed streams leave.
// No frames: the callback records what the node would have sent.
#include <gtest/gtest.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "engine/node/channels.h"

namespace lanecast::engine {
namespace {

using Step = Channels::Step;
using Channel = Channels::Channel;
constexpr uint64_t kMs = 1'000'000;

struct Sent {
  uint32_t peer;
  uint16_t lane;
  uint32_t value;
  bool operator==(const Sent&) const = default;
};

// Sends every item offered while its window is open; `refuse` decides
// another step for some.
template <typename Refuse>
std::vector<Sent> pump(Channels& ch, uint64_t now, Refuse&& refuse, uint32_t blocked_lanes = 0) {
  std::vector<Sent> out;
  ch.send_owed(blocked_lanes, [&](Channel& c, const OwedItem& item, bool may_send) {
    if (!may_send) return Step::kWait;
    if (const auto step = refuse(c, item); step != Step::kSent) return step;
    c.tx.push(/*op=*/1, item.value, now, item.signal, item.is_stream());
    out.push_back(Sent{c.peer, c.lane, item.value});
    return Step::kSent;
  });
  return out;
}
std::vector<Sent> pump(Channels& ch, uint64_t now = 0) {
  return pump(ch, now, [](Channel&, const OwedItem&) { return Step::kSent; });
}

void ack_all(Channels& ch, Channel& c, uint64_t now) {
  const uint64_t sack[2] = {0, 0};
  const auto r = c.tx.on_ack(c.tx.next_seq(), sack, now);
  ASSERT_TRUE(r.valid);
  ch.on_ack(c, r);
}

TEST(ChannelsPart, OwedSendsGoInTheOrderTheyWereOwedAcrossPeers) {
  Channels::Counters k;
  Channels ch(4, 1, 16, reliable::RttParams{}, 4, 64, k);
  // A forwarder owes segments 0..2 to each of three children, as a machine
  // asks: segment s to every child before s+1 to any.
  for (uint32_t s = 0; s < 3; ++s)
    for (algos::Rank r = 1; r <= 3; ++r) ASSERT_TRUE(ch.owe_segment(ch.at(r, 0), s));
  EXPECT_EQ(ch.owed(), 9u);
  const auto sent = pump(ch);
  std::vector<Sent> want;
  for (uint32_t s = 0; s < 3; ++s)
    for (uint32_t r = 1; r <= 3; ++r) want.push_back(Sent{r, 0, s});
  EXPECT_EQ(sent, want);
  EXPECT_EQ(ch.owed(), 0u);
  EXPECT_EQ(ch.unacked(), 9u);
}

// A run offered to the node: who, from which item, how many may go at once.
struct Offer {
  uint32_t peer;
  uint32_t value;
  uint32_t run;
  bool operator==(const Offer&) const = default;
};

// Sends at most `take` items of each run offered as one burst, as
// Node::send_segment_run does.
std::vector<Offer> pump_runs(Channels& ch, uint32_t take, std::vector<Sent>* sent) {
  std::vector<Offer> offers;
  ch.send_owed(0, [&](Channel& c, const OwedItem& item, bool may_send) -> Channels::Outcome {
    if (!may_send) return Step::kWait;
    offers.push_back(Offer{c.peer, item.value, item.run});
    const uint32_t n = std::min(item.run, take);
    for (uint32_t i = 0; i < n; ++i) {
      c.tx.push(/*op=*/1, item.value + i * item.stride, 0);
      sent->push_back(Sent{c.peer, c.lane, item.value + i * item.stride});
    }
    return Channels::Outcome{Step::kSent, n};
  });
  return offers;
}

TEST(ChannelsPart, ARunGoesAtOnceUpToTheFirstItemOwedToAnotherPeer) {
  Channels::Counters k;
  Channels ch(4, 1, 64, reliable::RttParams{}, 4, 64, k);
  // A pipeline's forwards to peer 1, then one item owed to peer 2, then
  // two more to peer 1.
  for (uint32_t s = 0; s < 10; ++s) ASSERT_TRUE(ch.owe_segment(ch.at(1, 0), s));
  ASSERT_TRUE(ch.owe_segment(ch.at(2, 0), 20));
  for (uint32_t s = 10; s < 12; ++s) ASSERT_TRUE(ch.owe_segment(ch.at(1, 0), s));
  std::vector<Sent> sent;
  EXPECT_EQ(pump_runs(ch, 64, &sent), (std::vector<Offer>{{1, 0, 10}, {2, 20, 1}, {1, 10, 2}}));
  std::vector<Sent> want;
  for (uint32_t s = 0; s < 10; ++s) want.push_back(Sent{1, 0, s});
  want.push_back(Sent{2, 0, 20});
  want.push_back(Sent{1, 0, 10});
  want.push_back(Sent{1, 0, 11});
  EXPECT_EQ(sent, want) << "the machine's order, as one item at a time would send it";
  EXPECT_EQ(ch.owed(), 0u);
  EXPECT_EQ(ch.unacked(), 13u);
  EXPECT_EQ(ch.at(1, 0).tx.in_flight(), 12u);
}

TEST(ChannelsPart, PartOfARunTakenLeavesTheRestOfferedNext) {
  Channels::Counters k;
  Channels ch(3, 1, 64, reliable::RttParams{}, 2, 64, k);
  for (uint32_t s = 0; s < 7; ++s) ASSERT_TRUE(ch.owe_segment(ch.at(1, 0), 2 * s));  // stride 2
  std::vector<Sent> sent;
  EXPECT_EQ(pump_runs(ch, 3, &sent), (std::vector<Offer>{{1, 0, 7}, {1, 6, 4}, {1, 12, 1}}));
  ASSERT_EQ(sent.size(), 7u);
  for (uint32_t i = 0; i < 7; ++i) EXPECT_EQ(sent[i].value, 2 * i);
  EXPECT_EQ(ch.owed(), 0u);
  EXPECT_EQ(ch.unacked(), 7u);
}

TEST(ChannelsPart, ATreesAlternatingSendsAreOfferedOneAtATime) {
  Channels::Counters k;
  Channels ch(3, 1, 64, reliable::RttParams{}, 2, 64, k);
  // A binary tree's forwarder: segment s to each child before s+1 to any.
  for (uint32_t s = 0; s < 4; ++s)
    for (algos::Rank r = 1; r <= 2; ++r) ASSERT_TRUE(ch.owe_segment(ch.at(r, 0), s));
  std::vector<Sent> sent;
  const auto offers = pump_runs(ch, 64, &sent);
  ASSERT_EQ(offers.size(), 8u);
  for (size_t i = 0; i + 1 < offers.size(); ++i) EXPECT_EQ(offers[i].run, 1u) << i;
  EXPECT_EQ(offers.back().run, 1u) << "the last item: the one left in its run";
  for (size_t i = 0; i < sent.size(); ++i) EXPECT_EQ(sent[i], (Sent{static_cast<uint32_t>(1 + i % 2), 0, static_cast<uint32_t>(i / 2)}));
}

TEST(ChannelsPart, SlabsAreLentToTheEarliestOwedAndComeBackWhenAChannelIsDone) {
  Channels::Counters k;
  Channels ch(3, 1, 16, reliable::RttParams{}, /*slabs=*/1, 64, k);
  ASSERT_TRUE(ch.owe_segment(ch.at(2, 0), 0));  // owed first: gets the one slab
  ASSERT_TRUE(ch.owe_segment(ch.at(1, 0), 1));
  EXPECT_EQ(pump(ch), (std::vector<Sent>{{2, 0, 0}}));
  EXPECT_EQ(ch.slabs_in_use(), 1u);
  EXPECT_EQ(ch.active_count(), 1u);
  EXPECT_EQ(pump(ch), std::vector<Sent>{}) << "peer 1 waits while peer 2's frame is in flight";
  ack_all(ch, ch.at(2, 0), kMs);
  EXPECT_EQ(ch.slabs_in_use(), 0u) << "acked and owing nothing: the slab goes back";
  EXPECT_EQ(ch.unacked(), 0u);
  EXPECT_EQ(pump(ch), (std::vector<Sent>{{1, 0, 1}}));
}

TEST(ChannelsPart, AChannelWhoseWindowIsFullWaitsWithoutHoldingUpOthers) {
  Channels::Counters k;
  Channels ch(3, 1, /*window=*/2, reliable::RttParams{}, 2, 64, k);
  for (uint32_t s = 0; s < 4; ++s) ASSERT_TRUE(ch.owe_segment(ch.at(1, 0), s));
  ASSERT_TRUE(ch.owe_segment(ch.at(2, 0), 9));
  EXPECT_EQ(pump(ch), (std::vector<Sent>{{1, 0, 0}, {1, 0, 1}, {2, 0, 9}}));
  EXPECT_EQ(ch.owed(), 2u);
  ack_all(ch, ch.at(1, 0), kMs);
  EXPECT_EQ(pump(ch), (std::vector<Sent>{{1, 0, 2}, {1, 0, 3}}));
}

TEST(ChannelsPart, AFullLaneStopsOnlyThatLaneAndABlockedLaneSendsNothing) {
  Channels::Counters k;
  Channels ch(2, 2, 16, reliable::RttParams{}, 2, 64, k);
  for (uint32_t s = 0; s < 3; ++s) {
    ASSERT_TRUE(ch.owe_segment(ch.at(1, 0), s));
    ASSERT_TRUE(ch.owe_segment(ch.at(1, 1), 10 + s));
  }
  // Lane 0 has room for one frame this turn.
  int room0 = 1;
  auto lane0_room = [&](Channel& c, const OwedItem&) {
    return c.lane == 0 && room0-- <= 0 ? Step::kLaneFull : Step::kSent;
  };
  EXPECT_EQ(pump(ch, 0, lane0_room), (std::vector<Sent>{{1, 0, 0}, {1, 1, 10}, {1, 1, 11}, {1, 1, 12}}));
  // A lane held back (a multicast still waiting on it) sends nothing.
  EXPECT_EQ(pump(ch, 0, [](Channel&, const OwedItem&) { return Step::kSent; }, /*blocked_lanes=*/1u),
            std::vector<Sent>{});
  EXPECT_EQ(pump(ch), (std::vector<Sent>{{1, 0, 1}, {1, 0, 2}}));
}

TEST(ChannelsPart, StopLeavesEverythingOwedLetGoMovesOnWithNothingInFlight) {
  Channels::Counters k;
  Channels ch(2, 1, 16, reliable::RttParams{}, 1, 64, k);
  ASSERT_TRUE(ch.owe_batch(ch.at(1, 0), 7, /*slot=*/3));
  ASSERT_TRUE(ch.owe_segment(ch.at(1, 0), 0));
  EXPECT_EQ(pump(ch, 0, [](Channel&, const OwedItem&) { return Step::kStop; }), std::vector<Sent>{});
  EXPECT_EQ(ch.owed(), 2u);
  auto let_go_batches = [](Channel&, const OwedItem& item) { return item.is_stream() ? Step::kLetGo : Step::kSent; };
  EXPECT_EQ(pump(ch, 0, let_go_batches), (std::vector<Sent>{{1, 0, 0}}));
  EXPECT_EQ(ch.owed(), 0u);
  EXPECT_EQ(ch.unacked(), 1u);
  // Only batches, all let go: the channel gives its slab back at once (no
  // ack will come to free it).
  ack_all(ch, ch.at(1, 0), kMs);
  ASSERT_TRUE(ch.owe_batch(ch.at(1, 0), 8, 3));
  EXPECT_EQ(pump(ch, 0, let_go_batches), std::vector<Sent>{});
  EXPECT_EQ(ch.slabs_in_use(), 0u);
}

TEST(ChannelsPart, AFailedBroadcastDropsItsOwedItemsAbandonsWhatFliesAndKeepsStreams) {
  Channels::Counters k;
  Channels ch(3, 1, 16, reliable::RttParams{}, 2, 64, k);
  ASSERT_TRUE(ch.owe_segment(ch.at(1, 0), 0));
  ASSERT_TRUE(ch.owe_segment(ch.at(2, 0), 0));
  ASSERT_TRUE(pump(ch).size() == 2);
  ASSERT_TRUE(ch.owe_segment(ch.at(1, 0), 1));
  ASSERT_TRUE(ch.owe_batch(ch.at(2, 0), 5, 0));
  ASSERT_TRUE(ch.owe_segment(ch.at(2, 0), 1));
  EXPECT_FALSE(ch.resending());
  ch.drop_broadcast(kMs);
  ch.after_broadcast();
  EXPECT_EQ(ch.owed(), 1u) << "the stream's batch stays owed";
  EXPECT_TRUE(ch.resending()) << "frames in flight go again, empty";
  uint32_t resent = 0;
  ch.send_resends([&](Channel& c) {
    while (c.tx.has_resend()) {
      EXPECT_NE(c.tx.entry(c.tx.resend_front()).flags & reliable::InFlight::kAbandoned, 0);
      c.tx.resend_done(kMs);
      ++resent;
    }
  });
  EXPECT_EQ(resent, 2u);
  EXPECT_FALSE(ch.resending());
  EXPECT_EQ(pump(ch), (std::vector<Sent>{{2, 0, 5}}));
}

TEST(ChannelsPart, FailedStreamsLeaveNothingOwedAndEveryChannelUnlisted) {
  Channels::Counters k;
  Channels ch(3, 1, 16, reliable::RttParams{}, 2, 64, k);
  ASSERT_TRUE(ch.owe_batch(ch.at(1, 0), 1, 0));
  ASSERT_TRUE(pump(ch).size() == 1);
  ASSERT_TRUE(ch.owe_batch(ch.at(1, 0), 2, 0));
  ASSERT_TRUE(ch.owe_batch(ch.at(2, 0), 2, 0));
  ch.drop_everything(kMs);
  EXPECT_EQ(ch.owed(), 0u);
  EXPECT_TRUE(ch.resending()) << "the batch in flight is abandoned too";
  EXPECT_EQ(pump(ch), std::vector<Sent>{});
  // Lists are empty and consistent: new work is owed and sent as usual.
  ASSERT_TRUE(ch.owe_segment(ch.at(2, 0), 4));
  EXPECT_EQ(pump(ch), (std::vector<Sent>{{2, 0, 4}}));
}

TEST(ChannelsPart, ATimeoutQueuesResendsOnceAndIsCounted) {
  Channels::Counters k;
  Channels ch(2, 1, 16, reliable::RttParams{}, 1, 64, k);
  for (uint32_t s = 0; s < 4; ++s) ASSERT_TRUE(ch.owe_segment(ch.at(1, 0), s));
  ASSERT_EQ(pump(ch).size(), 4u);
  Channel& c = ch.at(1, 0);
  ch.on_timeout(c, c.tx.deadline());
  EXPECT_EQ(k.rto_timeouts.get(), 1u);
  // Again before anything was sent again: nothing more to queue, so not a
  // timeout that counts, and the channel is listed once.
  ch.on_timeout(c, c.tx.deadline());
  EXPECT_EQ(k.rto_timeouts.get(), 1u);
  uint32_t visits = 0;
  ch.send_resends([&](Channel&) { ++visits; });
  EXPECT_EQ(visits, 1u);
  EXPECT_TRUE(ch.resending()) << "it sent none of them: it stays listed";
}

TEST(ChannelsPart, OwedRunsRunningOutIsRefusedAndCounted) {
  Channels::Counters k;
  Channels ch(3, 1, 16, reliable::RttParams{}, 2, /*runs=*/1, k);
  EXPECT_TRUE(ch.owe_segment(ch.at(1, 0), 0));
  EXPECT_FALSE(ch.owe_segment(ch.at(2, 0), 0));
  EXPECT_EQ(k.owed_runs_exhausted.get(), 1u);
  EXPECT_EQ(ch.owed(), 1u);
  ch.grow_runs(4);
  EXPECT_TRUE(ch.owe_segment(ch.at(2, 0), 0));
}

TEST(ChannelsPart, LanesBeyondAMaskAreRefused) {
  Channels::Counters k;
  EXPECT_THROW(Channels(2, 0, 16, reliable::RttParams{}, 1, 8, k), std::invalid_argument);
  EXPECT_THROW(Channels(2, Channels::kMaxLanes + 1, 16, reliable::RttParams{}, 1, 8, k), std::invalid_argument);
}

}  // namespace
}  // namespace lanecast::engine
