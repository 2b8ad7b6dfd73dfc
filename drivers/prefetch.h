// Fetching bytes ahead of their use, for the engine and the drivers alike:
// a range of lines, and the buffers a mempool will hand out next.
//
// A core's cache of a pool gives buffers back last in, first out, so the
// next allocations are the top of that cache: known, but cold when they went
// back long ago (a broadcast's payload buffers, freed at its end; the
// switch's header buffers, freed a ring and a delay line after their frame
// was sent). The allocation then waits for the descriptor's lines (the reset
// writes both), and the first bytes written into the buffer wait for theirs.
#pragma once

#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_prefetch.h>

#include <algorithm>
#include <cstdint>

namespace lanecast::drivers {

// Every line from `begin` until `end`: a pointer walked by lines, the
// loop's whole cost 3 instructions a line beside the fetch (an index
// widened to a pointer's size each line cost twice that, about 130 of a
// 1400-byte frame's instructions in all). DPDK's fetch, an asm statement:
// GCC 12 deleted a loop of __builtin_prefetch() as one without effects.
inline void prefetch_lines(const void* begin, const void* end) {
  for (auto* p = static_cast<const uint8_t*>(begin); p < static_cast<const uint8_t*>(end); p += RTE_CACHE_LINE_SIZE)
    rte_prefetch0(p);
}

// The next `count` buffers this core will take from `pool`: their two
// descriptor lines and the first `data_bytes` of their data room (after the
// headroom). Nothing on a thread without a pool cache (not an EAL core).
inline void prefetch_next_allocs(rte_mempool* pool, uint32_t count, uint32_t data_bytes) {
  const rte_mempool_cache* cache = rte_mempool_default_cache(pool, rte_lcore_id());
  if (cache == nullptr) return;
  const uint32_t n = std::min<uint32_t>(cache->len, count);
  const uint32_t data_at = sizeof(rte_mbuf) + rte_pktmbuf_priv_size(pool) + RTE_PKTMBUF_HEADROOM;
  for (uint32_t k = 1; k <= n; ++k) {
    const auto* obj = static_cast<const uint8_t*>(cache->objs[cache->len - k]);
    rte_prefetch0(obj);
    rte_prefetch0(obj + RTE_CACHE_LINE_SIZE);
    prefetch_lines(obj + data_at, obj + data_at + data_bytes);
  }
}

}  // namespace lanecast::drivers
