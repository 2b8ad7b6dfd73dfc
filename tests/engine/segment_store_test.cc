// The running broadcast's segment store (engine/node/segment_store.h),
// alone, on real mbufs: what it keeps, the second copy it refuses, and that
// every buffer goes back to its pool when the broadcast ends or the store
// goes - counted by the pool itself. And the received frames' header buffers
// held for a burst (engine/node/buffer_returns.h): every one back to its own
// pool, shared and indirect ones included.
#include <gtest/gtest.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "engine/node/segment_store.h"
#include "engine/node/buffer_returns.h"
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

TEST(BufferReturnsPart, HeadersFromTwoPoolsAndMoreThanItHoldsAllGoBackToTheirOwnPools) {
  rte_mempool* a = test::test_pool("spent_a", 511);
  rte_mempool* b = test::test_pool("spent_b", 511);
  const unsigned a_before = rte_mempool_avail_count(a), b_before = rte_mempool_avail_count(b);
  {
    BufferReturns spent;
    // A burst of 3 x kCap, the pools alternating in runs of 5.
    for (uint32_t i = 0; i < 3 * BufferReturns::kCap; ++i) spent.give(segment_buffer((i / 5) % 2 ? b : a, 0));
    EXPECT_LT(rte_mempool_avail_count(a) + rte_mempool_avail_count(b), a_before + b_before) << "some held until flush";
    spent.flush();
    EXPECT_EQ(rte_mempool_avail_count(a), a_before);
    EXPECT_EQ(rte_mempool_avail_count(b), b_before);
    for (uint32_t i = 0; i < 7; ++i) spent.give(segment_buffer(a, 0));
  }
  EXPECT_EQ(rte_mempool_avail_count(a), a_before) << "what it held when it went";
}

TEST(BufferReturnsPart, AHeaderReferencedElsewhereOrIndirectIsNotPutBackUnderItsHolder) {
  rte_mempool* pool = test::test_pool("spent_c", 255);
  const unsigned before = rte_mempool_avail_count(pool);
  BufferReturns spent;
  // Shared: another holder still references it (a fabric's multicast copy).
  rte_mbuf* shared = segment_buffer(pool, 4);
  rte_mbuf_refcnt_update(shared, 1);
  spent.give(shared);
  spent.flush();
  EXPECT_EQ(rte_mempool_avail_count(pool), before - 1);
  EXPECT_EQ(rte_mbuf_refcnt_read(shared), 1);
  EXPECT_EQ(*rte_pktmbuf_mtod(shared, const uint8_t*), 4) << "the other holder's bytes stay";
  rte_pktmbuf_free(shared);
  EXPECT_EQ(rte_mempool_avail_count(pool), before);
  // Indirect: a clone of a buffer the sender keeps.
  rte_mbuf* original = segment_buffer(pool, 5);
  rte_mbuf* clone = rte_pktmbuf_clone(original, pool);
  ASSERT_NE(clone, nullptr);
  spent.give(clone);
  spent.flush();
  EXPECT_EQ(rte_mbuf_refcnt_read(original), 1) << "the clone let go of the original";
  EXPECT_EQ(rte_mempool_avail_count(pool), before - 1);
  rte_pktmbuf_free(original);
  EXPECT_EQ(rte_mempool_avail_count(pool), before);
}

TEST(BufferReturnsPart, ASharedBufferGoesBackWhenItsLastHolderLetsGo) {
  rte_mempool* pool = test::test_pool("returns_d", 255);
  const unsigned before = rte_mempool_avail_count(pool);
  rte_mbuf* m = segment_buffer(pool, 6);
  rte_mbuf_refcnt_update(m, 2);  // three holders
  BufferReturns back;
  back.give_shared(m);
  back.give_shared(m);
  back.flush();
  EXPECT_EQ(rte_mbuf_refcnt_read(m), 1);
  EXPECT_EQ(rte_mempool_avail_count(pool), before - 1) << "one holder left";
  back.give_shared(m);
  back.flush();
  EXPECT_EQ(rte_mempool_avail_count(pool), before);
}

TEST(SegmentStorePart, SharedAndSplitBuffersLoseOnlyTheStoresReference) {
  rte_mempool* pool = test::test_pool("seg_store_e", 255);
  const unsigned before = rte_mempool_avail_count(pool);
  rte_mbuf* shared = segment_buffer(pool, 7);
  rte_mbuf_refcnt_update(shared, 1);  // a forward still queued holds it too
  rte_mbuf* split = segment_buffer(pool, 8);
  rte_mbuf* tail = segment_buffer(pool, 9);
  ASSERT_EQ(rte_pktmbuf_chain(split, tail), 0);
  {
    SegmentStore store(4);
    store.keep(0, SegmentStore::Entry{shared, 0, {}});
    store.keep(1, SegmentStore::Entry{split, 0, {}});
    store.keep(2, SegmentStore::Entry{segment_buffer(pool, 10), 0, {}});
    EXPECT_EQ(rte_mempool_avail_count(pool), before - 4);
    store.clear();
    EXPECT_EQ(rte_mempool_avail_count(pool), before - 1) << "the shared buffer's other holder keeps it";
    EXPECT_EQ(rte_mbuf_refcnt_read(shared), 1);
    EXPECT_EQ(*rte_pktmbuf_mtod(shared, const uint8_t*), 7);
  }
  rte_pktmbuf_free(shared);
  EXPECT_EQ(rte_mempool_avail_count(pool), before);
}

}  // namespace
}  // namespace lanecast::engine
