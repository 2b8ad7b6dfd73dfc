// The frames a node sends, begun and finished: a header mbuf holding the
// link header and room for lanecast's headers, chained by reference to a
// payload's mbuf (zero copy; flattened for a port that cannot send chains).
// It knows the header lengths (with seals in a group with a key) and the
// node's origin. The node, its broadcast and its streams fill the bodies.
// It also holds the header buffers of received frames until they go back to
// their pools (buffer_returns.h).
//
// A concrete class the others call directly, its per-frame calls inline:
// every data frame sent takes a header and a chained payload.
#pragma once

#include <rte_mbuf.h>

#include <cassert>
#include <cstdint>
#include <cstring>

#include "drivers/port.h"
#include "engine/node/buffer_returns.h"
#include "engine/runtime/counter.h"
#include "engine/wire/wire.h"

namespace lanecast::engine {

class FrameBuilder {
 public:
  struct Counters {
    Counter& tx_alloc_failures;  // a pool was empty (NodeCounters::tx_alloc_failures)
    Counter& tx_flatten_bytes;   // payload bytes copied to flatten frames (NodeCounters::tx_flatten_bytes)
  };
  // `sealed`: a group with a key (every frame sealed, headers longer).
  FrameBuilder(drivers::Port& port, rte_mempool* header_pool, rte_mempool* payload_pool, wire::Origin origin,
               bool sealed, Counters counters);

  // A header mbuf holding the link header to `to` and room for
  // `header_bytes` of lanecast headers at *body; null when the pool is empty.
  rte_mbuf* alloc_frame(const drivers::PeerAddress& to, uint16_t header_bytes, uint8_t** body) {
    rte_mbuf* h = rte_pktmbuf_alloc(header_pool_);
    if (h == nullptr) {
      counters_.tx_alloc_failures.add();
      return nullptr;
    }
    auto* p = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(h, link_bytes_ + header_bytes));
    port_.write_link_header(p, to);
    *body = p + link_bytes_;
    return h;
  }
  // n header mbufs at once, as alloc_frame() makes one, into frames[],
  // their bodies into bodies[]; false (none taken) when the pool has fewer.
  // One trip to the pool's cache for a run of frames to one peer.
  bool alloc_frames(const drivers::PeerAddress& to, uint16_t header_bytes, rte_mbuf** frames, uint8_t** bodies,
                    uint32_t n) {
    assert(header_bytes >= 16);  // the link header's copy below spills up to 15 bytes into them
    if (rte_mempool_get_bulk(header_pool_, reinterpret_cast<void**>(frames), n) != 0) {
      counters_.tx_alloc_failures.add();
      return false;
    }
    // Straight from the pool: DPDK keeps every buffer there with one
    // reference, one segment and no next (what rte_mbuf_raw_alloc()
    // promises), so a header's fields are written here in a few stores, as
    // DPDK's drivers rearm receive buffers, not reset field by field first.
    // Fresh and empty: the headers fit (the node checked its header pool's
    // room against a data frame's headers when it was made), so no append's
    // walk and checks.
    const auto len = static_cast<uint16_t>(link_bytes_ + header_bytes);
    // The port writes the first frame's link header; the others, to the same
    // peer, copy it 16 bytes at a time (no call a frame). The copy's bytes
    // past the link header are the caller's to overwrite: `header_bytes`
    // (a data header, more than 16) follow it in every frame.
    const uint8_t* link = nullptr;
    for (uint32_t i = 0; i < n; ++i) {
      rte_mbuf* h = frames[i];
      std::memcpy(&h->rearm_data, &header_rearm_, sizeof header_rearm_);  // data_off, refcnt, nb_segs, port
      h->ol_flags = header_ol_flags_;
      h->packet_type = 0;
      h->pkt_len = len;
      h->data_len = len;
      h->vlan_tci = 0;
      h->tx_offload = 0;
      auto* p = rte_pktmbuf_mtod(h, uint8_t*);
      if (link == nullptr) {
        port_.write_link_header(p, to);
        link = p;
      } else {
        for (uint32_t at = 0; at < link_bytes_; at += 16) std::memcpy(p + at, link + at, 16);
      }
      bodies[i] = p + link_bytes_;
    }
    return true;
  }
  // `header` chained to `payload` by reference, or flattened for a port
  // without chains; null when that failed (both freed).
  // Zero-copy: the payload is shared by reference, never copied.
  rte_mbuf* attach_payload(rte_mbuf* header, rte_mbuf* payload) {
    // One segment (every payload a member holds but a split one): its
    // descriptor's second line, where `next` is, is not read - by then it is
    // rarely in the cache.
    if (payload->nb_segs == 1) {
      rte_mbuf_refcnt_update(payload, 1);
    } else {
      for (rte_mbuf* m = payload; m != nullptr; m = m->next) rte_mbuf_refcnt_update(m, 1);
    }
    header->next = payload;
    header->nb_segs = static_cast<uint16_t>(1 + payload->nb_segs);
    header->pkt_len += payload->pkt_len;
    return chained_ ? header : flatten(header);
  }

  // Where the receive path leaves the header buffers of frames it took
  // the payloads of (buffer_returns.h).
  BufferReturns& spent_headers() { return spent_; }

  wire::Origin origin() const { return origin_; }
  uint16_t seal_flag() const { return seal_flag_; }
  // A data frame's payload seal (a group with a key), after its body.
  void put_payload_seal(uint8_t* at, const wire::Seal& seal) const {
    if (seal_flag_ != 0) wire::write_payload_seal(at, seal);
  }
  // Header lengths, with seals when sealed.
  uint32_t data_header() const { return hdr_data_; }
  uint32_t ack_header() const { return hdr_ack_; }
  uint32_t failed_header() const { return hdr_failed_; }
  uint16_t link_bytes() const { return link_bytes_; }
  // A data frame with `payload` bytes, link header included.
  uint32_t data_frame_bytes(uint32_t payload) const { return link_bytes_ + hdr_data_ + payload; }

 private:
  rte_mbuf* flatten(rte_mbuf* chained);
  // A fresh header's rearm_data: data_off at the headroom, one reference,
  // one segment, no port.
  static uint64_t header_rearm();

  // Once: header_rearm(). The headers fit after that headroom (the node
  // checks its header pool's room when it is made).
  const uint64_t header_rearm_ = header_rearm();
  // A fresh header's ol_flags: none, but the external buffer's mark in a
  // pool of pinned external buffers (rte_pktmbuf_reset() keeps it too).
  uint64_t header_ol_flags_ = 0;

  drivers::Port& port_;
  rte_mempool* header_pool_;
  rte_mempool* payload_pool_;
  wire::Origin origin_;
  uint16_t link_bytes_;
  uint16_t seal_flag_ = 0;
  uint32_t hdr_data_ = wire::kDataHeaderBytes;
  uint32_t hdr_ack_ = wire::kAckHeaderBytes;
  uint32_t hdr_failed_ = wire::kFailedBytes;
  bool chained_ = true;
  Counters counters_;
  BufferReturns spent_;
};

}  // namespace lanecast::engine
