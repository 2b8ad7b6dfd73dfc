// Frames whose bytes live on the heap, in a buffer exactly as long as the
// frame. DPDK's own buffers come from memory AddressSanitizer does not watch
// (DPDK is not built with it), so a read past the end of a frame there goes
// unseen; here it is a heap-buffer-overflow. The mbuf header still comes from
// a DPDK pool, so the frame travels through ports and rings like any other,
// and freeing it the DPDK way frees the heap buffer (the external buffer's
// callback). A frame the code under test forgets to free is a heap leak that
// LeakSanitizer reports.
#pragma once

#include <rte_mbuf.h>

#include <cstdint>
#include <cstring>

namespace lanecast::fuzz {

namespace detail {

struct HeapBuffer {
  rte_mbuf_ext_shared_info shinfo{};
  uint8_t* bytes = nullptr;  // the frame, exactly its length
};

inline void free_heap_buffer(void* /*addr*/, void* opaque) {
  auto* b = static_cast<HeapBuffer*>(opaque);
  delete[] b->bytes;
  delete b;
}

}  // namespace detail

// One mbuf (header from `headers`, data on the heap) holding `len` bytes
// copied from `bytes`; nullptr if the pool is empty.
inline rte_mbuf* heap_frame(rte_mempool* headers, const uint8_t* bytes, uint16_t len) {
  rte_mbuf* m = rte_pktmbuf_alloc(headers);
  if (m == nullptr) return nullptr;
  auto* b = new detail::HeapBuffer;
  b->bytes = new uint8_t[len];  // len 0: a valid empty allocation, any access is caught
  b->shinfo.free_cb = detail::free_heap_buffer;
  b->shinfo.fcb_opaque = b;
  rte_mbuf_ext_refcnt_set(&b->shinfo, 1);
  rte_pktmbuf_attach_extbuf(m, b->bytes, RTE_BAD_IOVA, len, &b->shinfo);
  if (len > 0) {
    std::memcpy(b->bytes, bytes, len);
    rte_pktmbuf_append(m, len);  // headroom 0, room `len`: cannot fail
  }
  return m;
}

}  // namespace lanecast::fuzz
