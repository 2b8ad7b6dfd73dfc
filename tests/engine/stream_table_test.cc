// A member's streams by slot (engine/stream/stream_table.h), alone: which
// streams a group has, a state made once on its first frame with its tree
// and window, the order the core walks them, the counters application
// threads read, and batches still held going back to their pool.
#include <gtest/gtest.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "engine/stream/stream_table.h"
#include "tests/engine/eal_env.h"

namespace lanecast::engine::stream {
namespace {

StreamTable::Shape shape(uint32_t nodes, algos::Rank rank, uint32_t per = 2) {
  return StreamTable::Shape{nodes, rank, per, /*fanout=*/2, /*window_batches=*/16};
}

TEST(StreamTablePart, ASlotForEveryStreamOfTheGroupAndNoneOutsideIt) {
  StreamTable t(shape(4, 1, 3));
  EXPECT_EQ(t.size(), 12u);
  EXPECT_EQ(t.slot(0, 0), uint16_t{0});
  EXPECT_EQ(t.slot(2, 1), uint16_t{7});
  EXPECT_EQ(t.slot(3, 2), uint16_t{11});
  EXPECT_FALSE(t.slot(4, 0)) << "a rank outside the group";
  EXPECT_FALSE(t.slot(0, 3)) << "an index past streams_per_member";
  EXPECT_FALSE(t.slot(UINT32_MAX, UINT32_MAX));
  EXPECT_EQ(t.find(2, 1), nullptr) << "not opened yet";
  EXPECT_EQ(t.find(9, 0), nullptr);
  EXPECT_FALSE(t.any_open());
  for (size_t i = 0; i < t.size(); ++i) EXPECT_EQ(t.mirror(i), nullptr);
}

TEST(StreamTablePart, AStreamIsMadeOnceWithItsTreeAndWindowAndWalkedInTheOrderItOpened) {
  StreamTable t(shape(7, 1));
  bool opened = false;
  StreamState& a = t.open(*t.slot(0, 1), 0, 1, 500, &opened);
  EXPECT_TRUE(opened);
  EXPECT_EQ(a.publisher, 0u);
  EXPECT_EQ(a.index, 1u);
  EXPECT_EQ(a.slots.size(), 16u);
  EXPECT_EQ(a.mask, 15u);
  EXPECT_EQ(a.tree.parent(), 0u) << "rank 1's parent in publisher 0's binary tree";
  EXPECT_EQ(a.books.child_mark.size(), a.tree.children());
  EXPECT_EQ(a.books.slowest, 1u);
  EXPECT_EQ(a.books.last_report_ns, 500u);
  StreamState& b = t.open(*t.slot(1, 0), 1, 0, 600, &opened);
  EXPECT_TRUE(opened);
  EXPECT_EQ(b.tree.parent(), algos::kNoRank) << "the publisher has no parent";
  StreamState& again = t.open(*t.slot(0, 1), 0, 1, 700, &opened);
  EXPECT_FALSE(opened);
  EXPECT_EQ(&again, &a);
  EXPECT_EQ(again.books.last_report_ns, 500u) << "the state it had, not a new one";
  EXPECT_EQ(t.open_slots(), (std::vector<uint16_t>{*t.slot(0, 1), *t.slot(1, 0)}));
  EXPECT_EQ(t.find(0, 1), &a);
  ASSERT_NE(t.mirror(*t.slot(1, 0)), nullptr);
  EXPECT_EQ(t.mirror(*t.slot(1, 0))->publisher.load(), 1u);
  EXPECT_EQ(t.mirror(*t.slot(0, 0)), nullptr);
}

TEST(StreamTablePart, BatchesStillHeldGoBackToTheirPool) {
  rte_mempool* pool = test::test_pool("stream_table", 255);
  const unsigned before = rte_mempool_avail_count(pool);
  {
    StreamTable t(shape(3, 0));
    StreamState& s = t.open(*t.slot(0, 0), 0, 0, 0);
    for (uint64_t b = 0; b < 5; ++b) s.slot_of(b).payload = rte_pktmbuf_alloc(pool);
    StreamState& r = t.open(*t.slot(2, 1), 2, 1, 0);
    r.slot_of(3).payload = rte_pktmbuf_alloc(pool);
    EXPECT_EQ(rte_mempool_avail_count(pool), before - 6);
    t.free_batches();
    EXPECT_EQ(rte_mempool_avail_count(pool), before);
    EXPECT_EQ(s.slot_of(0).payload, nullptr);
    s.slot_of(9).payload = rte_pktmbuf_alloc(pool);  // held when the node goes
  }
  EXPECT_EQ(rte_mempool_avail_count(pool), before);
}

}  // namespace
}  // namespace lanecast::engine::stream
