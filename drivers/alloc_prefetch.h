// Fetching the buffers a mempool will hand out next, before they are asked
// for. A core's cache of a pool gives buffers back last in, first out, so the
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
    for (const uint8_t *p = obj + data_at, *end = p + data_bytes; p < end; p += RTE_CACHE_LINE_SIZE) rte_prefetch0(p);
  }
}

}  // namespace lanecast::drivers
