// The running broadcast's segment store (engine/node/segment_store.h),
// alone, on real mbufs: what it keeps, the second copy it refuses, and that
// every buffer goes back to its pool when the broadcast ends or the store
// goes - counted by the pool itself.
#include <gtest/gtest.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "engine/node/segment_store.h"
#include "tests/engine/eal_env.h"

namespace lanecast::engine {
namespace {

rte_mbuf* segment_buffer(rte_mempool* pool, uint8_t fill) {
  rte_mbuf* m = rte_pktmbuf_alloc(pool);
  EXPECT_NE(m, nullptr);
  auto* p = static_cast<uint8_t*>(static_cast<void*>(rte_pktmbuf_append(m, 64)));
  for (int i = 0; i < 64; ++i) p[i] = fill;
  return m;
}

TEST(SegmentStorePart, KeepsTheFirstCopyRefusesTheSecondAndFreesEverythingAtTheEnd) {
  rte_mempool* pool = test::test_pool("seg_store_a", 255);
  const unsigned before = rte_mempool_avail_count(pool);
  SegmentStore store(8);
  EXPECT_EQ(store.capacity(), 8u);
  EXPECT_FALSE(store.held(3));
  wire::Seal seal{};
  seal.tag[0] = 0x5a;
  EXPECT_TRUE(store.keep(3, SegmentStore::Entry{segment_buffer(pool, 1), 0x1234, seal}));
  EXPECT_TRUE(store.keep(7, SegmentStore::Entry{segment_buffer(pool, 2), 0x5678, {}}));
  EXPECT_TRUE(store.held(3));
  EXPECT_EQ(store[3].crc, 0x1234u);
  EXPECT_EQ(store[3].seal.tag[0], 0x5a);
  EXPECT_EQ(rte_mempool_avail_count(pool), before - 2);
  // A second copy (a multicast and its repair both arrived): the first
  // buffer stays, the second goes back at once.
  rte_mbuf* first = store[3].payload;
  EXPECT_FALSE(store.keep(3, SegmentStore::Entry{segment_buffer(pool, 9), 0x9999, {}}));
  EXPECT_EQ(store[3].payload, first);
  EXPECT_EQ(*rte_pktmbuf_mtod(store[3].payload, const uint8_t*), 1);
  EXPECT_EQ(store[3].crc, 0x1234u);
  EXPECT_EQ(rte_mempool_avail_count(pool), before - 2);
  store.clear();
  EXPECT_FALSE(store.held(3));
  EXPECT_FALSE(store.held(7));
  EXPECT_EQ(rte_mempool_avail_count(pool), before);
}

TEST(SegmentStorePart, WhatItHoldsWhenItGoesGoesBackToThePool) {
  rte_mempool* pool = test::test_pool("seg_store_b", 255);
  const unsigned before = rte_mempool_avail_count(pool);
  {
    SegmentStore store(4);
    for (uint32_t s = 0; s < 4; ++s) store.keep(s, SegmentStore::Entry{segment_buffer(pool, 3), 0, {}});
    EXPECT_EQ(rte_mempool_avail_count(pool), before - 4);
  }
  EXPECT_EQ(rte_mempool_avail_count(pool), before);
}

TEST(SegmentStorePart, ABufferSharedWithAFrameInFlightOutlivesTheStore) {
  // Zero copy: a frame sent to a child holds a reference to the stored
  // buffer; the store letting go must not free it under the frame.
  rte_mempool* pool = test::test_pool("seg_store_c", 255);
  const unsigned before = rte_mempool_avail_count(pool);
  SegmentStore store(2);
  rte_mbuf* m = segment_buffer(pool, 4);
  store.keep(0, SegmentStore::Entry{m, 0, {}});
  rte_mbuf_refcnt_update(m, 1);  // the frame's reference
  store.clear();
  EXPECT_EQ(rte_mbuf_refcnt_read(m), 1);
  EXPECT_EQ(*rte_pktmbuf_mtod(m, const uint8_t*), 4);
  rte_pktmbuf_free(m);  // the port sent the frame
  EXPECT_EQ(rte_mempool_avail_count(pool), before);
}

}  // namespace
}  // namespace lanecast::engine
