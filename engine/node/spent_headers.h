// Received frames' header buffers, given back to their pools a burst at a
// time. A frame from a ring port is a header buffer chained to the sender's
// payload; the receiver keeps the payload (payload_reads.h) and has no more
// use for the header. Given back one by one, each is a trip to its pool's
// per-core cache; held here and given back after the receive burst
// (Node::poll_rx flushes), it is one trip a burst.
#pragma once

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <cstdint>

namespace lanecast::engine {

// Received frames' header buffers, unlinked from their payloads, given back
// to their pool a burst at a time (the node flushes after each receive
// burst): one trip to the pool's cache per burst instead of one per frame.
// A buffer someone else still references, or one not plain (indirect,
// external), goes back at once the usual way.
class SpentHeaders {
 public:
  static constexpr uint32_t kCap = 64;
  SpentHeaders() = default;
  SpentHeaders(const SpentHeaders&) = delete;
  SpentHeaders& operator=(const SpentHeaders&) = delete;
  ~SpentHeaders() { flush(); }

  // m: one segment, no next. Inline and without calls on the usual path,
  // so the receive path around it keeps its registers.
  __attribute__((always_inline)) void give(rte_mbuf* m) {
    if (rte_mbuf_refcnt_read(m) != 1 || !RTE_MBUF_DIRECT(m) || n_ == kCap || (n_ > 0 && m->pool != pool_)) {
      give_slowly(m);
      return;
    }
    pool_ = m->pool;
    held_[n_++] = m;
  }
  void flush() {
    if (n_ > 0) rte_mempool_put_bulk(pool_, reinterpret_cast<void* const*>(held_), n_);
    n_ = 0;
  }

 private:
  __attribute__((noinline)) void give_slowly(rte_mbuf* m) {
    if (rte_mbuf_refcnt_read(m) != 1 || !RTE_MBUF_DIRECT(m)) {
      rte_pktmbuf_free_seg(m);
      return;
    }
    flush();
    pool_ = m->pool;
    held_[n_++] = m;
  }

  rte_mempool* pool_ = nullptr;
  uint32_t n_ = 0;
  rte_mbuf* held_[kCap];
};

}  // namespace lanecast::engine
