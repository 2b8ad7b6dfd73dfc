// Single-segment buffers given back to their pools in bulk. Given back one
// by one, each is a trip to its pool's per-core cache; held here and given
// back together, it is one trip a batch. Two users: the receive path, for
// received frames' header buffers - a frame from a ring port is a header
// buffer chained to the sender's payload, and the receiver keeps the payload
// (payload_reads.h); the node flushes after each receive burst - and the
// segment store, for the payloads a broadcast held (segment_store.h).
#pragma once

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <cstdint>

namespace lanecast::engine {

// A buffer someone else still references goes back when the last holder
// lets go (give_shared() drops this holder's reference); one not plain
// (indirect, external) goes back the usual way.
class BufferReturns {
 public:
  static constexpr uint32_t kCap = 64;
  BufferReturns() = default;
  BufferReturns(const BufferReturns&) = delete;
  BufferReturns& operator=(const BufferReturns&) = delete;
  ~BufferReturns() { flush(); }

  // m: one segment, no next, this holder's reference the only one. Inline
  // and without calls on the usual path, so the receive path around it
  // keeps its registers.
  __rte_always_inline void give(rte_mbuf* m) {
    if (rte_mbuf_refcnt_read(m) != 1 || !RTE_MBUF_DIRECT(m) || n_ == kCap || (n_ > 0 && m->pool != pool_)) {
      give_slowly(m);
      return;
    }
    pool_ = m->pool;
    held_[n_++] = m;
  }
  // m: one segment, no next, perhaps referenced elsewhere too (a forward
  // still queued, the root's own copy in process): this holder's reference
  // goes, and the buffer with it when it was the last.
  void give_shared(rte_mbuf* m) {
    if (rte_mbuf_refcnt_read(m) != 1 && RTE_MBUF_DIRECT(m)) {
      if (rte_mbuf_refcnt_update(m, -1) != 0) return;
      rte_mbuf_refcnt_set(m, 1);  // the last after all: back to its pool as one
    }
    give(m);
  }
  void flush() {
    if (n_ > 0) rte_mempool_put_bulk(pool_, reinterpret_cast<void* const*>(held_), n_);
    n_ = 0;
  }

 private:
  __rte_noinline void give_slowly(rte_mbuf* m) {
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
