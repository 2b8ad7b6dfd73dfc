// A node's stash (engine/node/stash.h), alone: which early frames go to the
// broadcast that starts, which wait for a later one, which are stale, and
// its bounds. Signals (no payload mbuf) stand in for frames: the stash's
// logic is the same for both.
#include <gtest/gtest.h>

#include <vector>

#include "engine/node/stash.h"

namespace lanecast::engine {
namespace {

Stash::Entry early(uint32_t op, algos::Rank src, uint32_t segment = 0, bool datagram = false) {
  Stash::Entry e{};
  e.frame = nullptr;
  e.src = src;
  e.signal = !datagram;
  e.datagram = datagram;
  e.data.op = op;
  e.data.segment = segment;
  return e;
}

std::vector<uint32_t> ops_taken(Stash& s, uint32_t op) {
  std::vector<uint32_t> got;
  s.release(op, [&](Stash::Entry& e) { got.push_back(e.data.op * 100 + e.data.segment); });
  return got;
}

TEST(StashPart, EachBroadcastTakesItsOwnFramesInArrivalOrderLaterOnesWaitEarlierOnesAreStale) {
  Stash::Counters k;
  Stash s(16, k);
  s.keep(early(5, 1, 0));
  s.keep(early(7, 2, 0));
  s.keep(early(5, 3, 1));
  s.keep(early(4, 1, 0));
  s.keep(early(6, 1, 2));
  EXPECT_EQ(k.kept.get(), 5u);
  EXPECT_EQ(ops_taken(s, 5), (std::vector<uint32_t>{500, 501}));
  EXPECT_EQ(k.stale.get(), 1u);  // op 4 ended before its frame was used
  EXPECT_EQ(s.size(), 2u);       // ops 6 and 7 wait
  EXPECT_EQ(ops_taken(s, 7), (std::vector<uint32_t>{700}));  // op 6 never ran here: stale
  EXPECT_EQ(k.stale.get(), 2u);
  EXPECT_EQ(s.size(), 0u);
}

TEST(StashPart, SequenceNumbersWrap) {
  Stash::Counters k;
  Stash s(4, k);
  s.keep(early(0xFFFFFFFFu, 1));
  s.keep(early(1, 1));  // after the wrap: later than 0xFFFFFFFF
  EXPECT_EQ(ops_taken(s, 0xFFFFFFFFu).size(), 1u);
  EXPECT_EQ(s.size(), 1u);
  EXPECT_EQ(k.stale.get(), 0u);
}

TEST(StashPart, ReliableFramesFillItMulticastCopiesOnlyHalf) {
  Stash::Counters k;
  Stash s(4, k);
  EXPECT_TRUE(s.room_for_datagram());
  s.keep(early(2, 1, 0, /*datagram=*/true));
  s.keep(early(2, 1, 1, true));
  EXPECT_FALSE(s.room_for_datagram());  // half: the rest is for frames that were acknowledged
  EXPECT_FALSE(s.full());
  s.keep(early(2, 2, 2));
  s.keep(early(2, 2, 3));
  EXPECT_TRUE(s.full());
}

}  // namespace
}  // namespace lanecast::engine
