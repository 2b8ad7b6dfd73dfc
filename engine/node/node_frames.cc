// Node: the frames it sends, built - a header mbuf with the link header and
// lanecast's headers, chained to the payload's mbuf (zero copy; flattened
// for ports that take one segment), for data, signals, acks and abandoned
// frames. The transmit path (node_tx.cc) decides what to send and when.
#include <rte_mbuf.h>

#include <algorithm>

#include "engine/auth/frame_auth.h"
#include "engine/checksum/crc32c.h"
#include "engine/node/node.h"

namespace lanecast::engine {

using algos::Rank;
using algos::SegmentIndex;

// A header mbuf holding the link header to `to` and room for `header_bytes`
// of lanecast headers at *body.
rte_mbuf* Node::alloc_frame(const drivers::PeerAddress& to, uint16_t header_bytes, uint8_t** body) {
  rte_mbuf* h = rte_pktmbuf_alloc(pools_.header);
  if (h == nullptr) {
    counters_.tx_alloc_failures.add();
    return nullptr;
  }
  auto* p = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(h, link_bytes_ + header_bytes));
  port_.write_link_header(p, to);
  *body = p + link_bytes_;
  return h;
}

// A port that cannot transmit chains gets one buffer holding header and
// payload: a copy, counted (tx_flatten_bytes), so the zero-copy promise is
// visibly off on such a port.
rte_mbuf* Node::flatten(rte_mbuf* chained) {
  rte_mbuf* flat = rte_pktmbuf_alloc(pools_.payload);
  void* dst = flat == nullptr ? nullptr : rte_pktmbuf_append(flat, static_cast<uint16_t>(chained->pkt_len));
  if (dst == nullptr) {
    if (flat != nullptr) rte_pktmbuf_free(flat);
    rte_pktmbuf_free(chained);
    counters_.tx_alloc_failures.add();
    return nullptr;
  }
  uint8_t* at = static_cast<uint8_t*>(dst);
  for (const rte_mbuf* s = chained; s != nullptr; s = s->next) {
    std::memcpy(at, rte_pktmbuf_mtod(s, const void*), s->data_len);
    at += s->data_len;
  }
  counters_.tx_flatten_bytes.add(chained->pkt_len - chained->data_len);
  rte_pktmbuf_free(chained);
  return flat;
}

rte_mbuf* Node::build_data(const drivers::PeerAddress& to, SegmentIndex seg, uint32_t seq, uint16_t lane,
                           uint16_t flags, wire::FrameType type) {
  uint8_t* at;
  rte_mbuf* h = alloc_frame(to, hdr_data_, &at);
  if (h == nullptr) return nullptr;
  const algos::Segment s = op_.plan->segment(seg);
  wire::DataBody b{};
  b.op = op_.sub.op;
  b.root = op_.sub.root;
  b.seq = seq;
  b.segment = seg;
  b.offset = s.offset;
  b.total_len = op_.sub.size;
  b.payload_len = s.length;
  b.payload_crc = store_[seg].crc;
  b.segment_bytes = cfg_.segment_bytes;
  b.algo = static_cast<uint8_t>(op_.sub.algo);
  b.lane = static_cast<uint8_t>(lane);
  wire::write_data(at, origin(), b, flags | seal_flag_, type);
  put_payload_seal(at, store_[seg].seal);
  return attach_payload(h, store_[seg].payload);
}

// Zero-copy: the payload is shared by reference, never copied (unless the
// port cannot send chains: flatten()).
rte_mbuf* Node::attach_payload(rte_mbuf* h, rte_mbuf* payload) {
  for (rte_mbuf* m = payload; m != nullptr; m = m->next) rte_mbuf_refcnt_update(m, 1);
  h->next = payload;
  h->nb_segs = static_cast<uint16_t>(1 + payload->nb_segs);
  h->pkt_len += payload->pkt_len;
  return caps_.tx_chained ? h : flatten(h);
}

// A signal: the data header of the running broadcast (so the receiver checks
// it against its plan like data), no payload, the tag in `segment`.
rte_mbuf* Node::build_signal(const Channel& c, uint32_t tag, uint32_t seq, uint16_t flags) {
  uint8_t* at;
  rte_mbuf* h = alloc_frame(addrs_[c.peer], hdr_data_, &at);
  if (h == nullptr) return nullptr;
  wire::DataBody b{};
  b.op = op_.sub.op;
  b.root = op_.sub.root;
  b.seq = seq;
  b.segment = tag;
  b.total_len = op_.sub.size;
  b.segment_bytes = cfg_.segment_bytes;
  b.algo = static_cast<uint8_t>(op_.sub.algo);
  b.lane = static_cast<uint8_t>(c.lane);
  wire::write_data(at, origin(), b, static_cast<uint16_t>(flags | wire::kFlagSignal | seal_flag_));
  put_payload_seal(at, wire::Seal{});
  return h;
}

rte_mbuf* Node::build_ack(Channel& c) {
  uint8_t* at;
  rte_mbuf* h = alloc_frame(addrs_[c.peer], hdr_ack_, &at);
  if (h == nullptr) return nullptr;
  const wire::AckBody a = c.rx.make_ack(c.lane);
  const uint16_t dups = c.rx.take_duplicates() ? wire::kFlagDuplicates : 0;
  wire::write_ack(at, origin(), a, static_cast<uint16_t>(seal_flag_ | dups));
  return h;
}

rte_mbuf* Node::build_abandoned(const Channel& c, uint32_t seq, const reliable::InFlight& e) {
  uint8_t* at;
  rte_mbuf* h = alloc_frame(addrs_[c.peer], hdr_data_, &at);
  if (h == nullptr) return nullptr;
  wire::DataBody b{};
  uint16_t flags = wire::kFlagAbandoned | wire::kFlagAckNow | seal_flag_;
  if (e.flags & reliable::InFlight::kStream) {
    // Which stream's batch it is: a child that lacks it learns that it will
    // never come from here (Streams::given_up).
    const stream::StreamState& s = streams_.state(static_cast<uint16_t>(e.op));
    b.op = s.index;
    b.root = s.publisher;
    flags |= wire::kFlagStream;
  } else {
    b.op = e.op;
  }
  b.seq = seq;
  b.segment = e.segment;
  b.segment_bytes = cfg_.segment_bytes;
  b.lane = static_cast<uint8_t>(c.lane);
  wire::write_data(at, origin(), b, flags);
  put_payload_seal(at, wire::Seal{});
  return h;
}

}  // namespace lanecast::engine
