// Packed buffer pools (engine/runtime/packed_pool.h): on an engine without hugepages
// or PCI devices, make_pool packs buffers back to back in one memzone
// instead of DPDK's one buffer per 4 KiB page. Every buffer must still be a
// whole, working mbuf, data that crosses a page boundary must survive, and
// the pool must take the memory it says.
#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "engine/group/group_setup.h"
#include "engine/runtime/packed_pool.h"
#include "tests/engine/eal_env.h"

namespace lanecast::engine {
namespace {

constexpr uint32_t kCount = 3000;
constexpr uint32_t kRoom = 2176;  // af_packet's: a buffer of 2.4 KB with its headers

void add_chunk(rte_mempool*, void* opaque, rte_mempool_memhdr* hdr, unsigned) {
  *static_cast<size_t*>(opaque) += hdr->len;
}

TEST(PackedPool, AppliesWithoutHugepagesOrPci) {
  test::start_eal();
  EXPECT_TRUE(packed_pools_apply());
}

// With per-lcore caches (a group in one process) and without (a joined
// member: one core at a time uses its pools).
class PackedPoolLayout : public ::testing::TestWithParam<bool> {};

TEST_P(PackedPoolLayout, EveryBufferWorksAndTheMemoryIsPacked) {
  test::start_eal();
  const bool caches = GetParam();
  PoolPtr pool = make_pool(caches ? "packed_test_c" : "packed_test", kCount, kRoom, caches);
  ASSERT_NE(pool, nullptr);
  EXPECT_EQ(pool->cache_size != 0, caches);
  rte_mempool* mp = pool.get();
  EXPECT_EQ(mp->flags & RTE_MEMPOOL_F_NO_IOVA_CONTIG, RTE_MEMPOOL_F_NO_IOVA_CONTIG);
  EXPECT_EQ(rte_pktmbuf_data_room_size(mp), kRoom);
  EXPECT_EQ(rte_pktmbuf_priv_size(mp), 0);

  // One chunk, the buffers back to back: DPDK's padded layout would take a
  // 4 KiB page per 2.4 KB buffer.
  size_t bytes = 0;
  EXPECT_EQ(rte_mempool_mem_iter(mp, add_chunk, &bytes), 1u);
  const size_t per = mp->header_size + mp->elt_size + mp->trailer_size;
  EXPECT_EQ(bytes, kCount * per);
  EXPECT_LT(bytes, size_t{kCount} * 4096 * 2 / 3);

  // Every buffer can be taken at once, each a fresh mbuf whose whole data
  // room holds what is written to it (many of them cross a page boundary).
  std::vector<rte_mbuf*> all(kCount);
  ASSERT_EQ(rte_pktmbuf_alloc_bulk(mp, all.data(), kCount), 0);
  size_t crossing = 0;
  for (uint32_t i = 0; i < kCount; ++i) {
    rte_mbuf* m = all[i];
    ASSERT_EQ(m->pool, mp);
    ASSERT_EQ(m->buf_len, kRoom);
    ASSERT_EQ(rte_pktmbuf_headroom(m), std::min<uint16_t>(RTE_PKTMBUF_HEADROOM, kRoom));
    ASSERT_EQ(rte_mbuf_refcnt_read(m), 1);
    auto* at = static_cast<uint8_t*>(m->buf_addr);
    const auto first = reinterpret_cast<uintptr_t>(at) / 4096, last = (reinterpret_cast<uintptr_t>(at) + kRoom - 1) / 4096;
    crossing += first != last;
    std::memset(at, static_cast<int>(i & 0xFF), kRoom);
  }
  EXPECT_GT(crossing, kCount / 4);
  for (uint32_t i = 0; i < kCount; ++i) {
    const auto* at = static_cast<const uint8_t*>(all[i]->buf_addr);
    ASSERT_TRUE(std::all_of(at, at + kRoom, [&](uint8_t b) { return b == (i & 0xFF); })) << "buffer " << i;
  }
  rte_mbuf* extra = rte_pktmbuf_alloc(mp);
  EXPECT_EQ(extra, nullptr);
  rte_pktmbuf_free_bulk(all.data(), kCount);
  EXPECT_EQ(rte_mempool_avail_count(mp), kCount);
}

INSTANTIATE_TEST_SUITE_P(Caches, PackedPoolLayout, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "lcore_caches" : "no_caches"; });

// A pool that cannot be had says so (make_pool throws with a hint); none is
// left behind half made.
TEST(PackedPool, TooLargeIsRefusedCleanly) {
  test::start_eal();
  EXPECT_THROW(make_pool("packed_huge", 1u << 22, 9000, false), std::runtime_error);
  EXPECT_EQ(rte_mempool_lookup("packed_huge"), nullptr);
  PoolPtr again = make_pool("packed_huge", 100, kRoom, false);  // the name is free again
  EXPECT_NE(again, nullptr);
}

}  // namespace
}  // namespace lanecast::engine
