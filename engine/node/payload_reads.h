// Receive-side helpers the node and its broadcast share: a received frame
// reduced to its payload, bytes read out of an mbuf chain, and a payload's
// seal checked and counted. Plain functions: they are per frame.
#pragma once

#include <rte_mbuf.h>
#include <rte_memcpy.h>

#include <cstdint>

#include "engine/auth/frame_auth.h"
#include "engine/node/buffer_returns.h"
#include "engine/runtime/counter.h"
#include "engine/wire/wire.h"

namespace lanecast::engine {

// Leaves only the payload: a frame from a ring port is a header mbuf chained
// to the sender's payload mbuf (a single segment), which we keep; a frame
// from a NIC-like port is one buffer, whose start we move past the headers.
// No byte is copied, and no reference count is touched: the header mbuf is
// unlinked and handed to `spent`, and the reference the frame held on the
// payload becomes ours.
__rte_always_inline rte_mbuf* payload_of(rte_mbuf* m, uint32_t payload_offset, BufferReturns& spent) {
  if (m->data_len == payload_offset && m->next != nullptr) {
    rte_mbuf* payload = m->next;
    m->next = nullptr;
    m->nb_segs = 1;
    m->pkt_len = m->data_len;
    spent.give(m);
    return payload;
  }
  rte_pktmbuf_adj(m, static_cast<uint16_t>(payload_offset));
  return m;
}

// Copies `len` bytes of an mbuf chain, from `offset` on, to dst.
inline bool read_into(const rte_mbuf* m, uint32_t offset, uint32_t len, void* dst) {
  const void* src = rte_pktmbuf_read(m, offset, len, dst);  // copies only when split
  if (src == nullptr) return false;
  if (src != dst) rte_memcpy(dst, src, len);
  return true;
}

// A payload's seal, by whoever made the bytes (the frame names them: the
// broadcast's root, the stream's publisher). Always true without a key; a
// failure is counted (NodeCounters::rx_bad_payload_seal).
inline bool payload_seal_ok(const auth::FrameAuth* auth, Counter& rx_bad_payload_seal, const uint8_t* bytes, uint32_t len,
                            const wire::Parsed& p) {
  if (auth == nullptr || auth->payload_ok(bytes, len, p.data.root, p.payload_seal)) return true;
  rx_bad_payload_seal.add();
  return false;
}

}  // namespace lanecast::engine
