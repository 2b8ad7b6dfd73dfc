#include "engine/runtime/packed_pool.h"

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mbuf_pool_ops.h>
#include <rte_memzone.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>

namespace lanecast::engine {
namespace {

void free_memzone(rte_mempool_memhdr*, void* mz) { rte_memzone_free(static_cast<const rte_memzone*>(mz)); }

// Fault the zone's pages in with one call instead of one fault per page as
// the buffers are first written (a fault costs 15-50 us in a VM). Kernels
// before 5.14 have no MADV_POPULATE_WRITE: the pages then fault as before.
void populate(const rte_memzone* mz) {
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<uintptr_t>(mz->addr) & ~(page - 1);
  const uintptr_t end = reinterpret_cast<uintptr_t>(mz->addr) + mz->len;
#ifdef MADV_POPULATE_WRITE
  (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);
#else
  (void)begin, (void)end;
#endif
}

}  // namespace

bool packed_pools_apply() { return rte_eal_has_hugepages() == 0 && rte_eal_has_pci() == 0; }

rte_mempool* make_packed_pktmbuf_pool(const std::string& name, uint32_t count, uint32_t cache, uint16_t data_room) {
  // rte_pktmbuf_pool_create's steps, with RTE_MEMPOOL_F_NO_IOVA_CONTIG and
  // the memory given here instead of by rte_mempool_populate_default.
  rte_mempool* mp = rte_mempool_create_empty(name.c_str(), count, static_cast<uint32_t>(sizeof(rte_mbuf)) + data_room,
                                             cache, sizeof(rte_pktmbuf_pool_private), SOCKET_ID_ANY,
                                             RTE_MEMPOOL_F_NO_IOVA_CONTIG);
  if (mp == nullptr) return nullptr;
  const auto fail = [mp](int err) -> rte_mempool* {
    rte_mempool_free(mp);  // and the memzone, once populated (free_memzone)
    rte_errno = err;
    return nullptr;
  };
  if (rte_mempool_set_ops_byname(mp, rte_mbuf_best_mempool_ops(), nullptr) != 0) return fail(EINVAL);
  rte_pktmbuf_pool_private priv{};
  priv.mbuf_data_room_size = data_room;
  rte_pktmbuf_pool_init(mp, &priv);

  // Buffers back to back, as the ring ops place them when page boundaries
  // do not matter (a handler that wants more room adds fewer: refused below).
  const uint64_t bytes = uint64_t{count} * (mp->header_size + mp->elt_size + mp->trailer_size);
  const std::string zone = "LCB_" + name;
  const rte_memzone* mz = rte_memzone_reserve_aligned(zone.c_str(), bytes, SOCKET_ID_ANY, 0, RTE_CACHE_LINE_SIZE);
  if (mz == nullptr) return fail(rte_errno);
  populate(mz);
  // From here the pool owns the zone (free_memzone), unless no buffer fit.
  const int added = rte_mempool_populate_iova(mp, static_cast<char*>(mz->addr), RTE_BAD_IOVA, mz->len, free_memzone,
                                              const_cast<rte_memzone*>(mz));
  if (added <= 0) {
    rte_memzone_free(mz);
    return fail(added < 0 ? -added : ENOMEM);
  }
  if (mp->populated_size != count) return fail(ENOMEM);
  rte_mempool_obj_iter(mp, rte_pktmbuf_init, nullptr);
  return mp;
}

}  // namespace lanecast::engine
