// Node: the bodies of the frames it sends - data, signals, acks and
// abandoned frames - in header mbufs from frames_ (frame_builder.h), data
// chained to its payload's mbuf. The transmit path (node_tx.cc) decides
// what to send and when.
#include <rte_mbuf.h>

#include <algorithm>

#include "engine/auth/frame_auth.h"
#include "engine/checksum/crc32c.h"
#include "engine/node/node.h"

namespace lanecast::engine {

using algos::Rank;
using algos::SegmentIndex;

// The StreamHost's frame helpers: frames_'s (frame_builder.h).
rte_mbuf* Node::alloc_frame(const drivers::PeerAddress& to, uint16_t header_bytes, uint8_t** body) {
  return frames_.alloc_frame(to, header_bytes, body);
}

rte_mbuf* Node::attach_payload(rte_mbuf* h, rte_mbuf* payload) { return frames_.attach_payload(h, payload); }

rte_mbuf* Node::build_ack(Channel& c) {
  uint8_t* at;
  rte_mbuf* h = frames_.alloc_frame(addrs_[c.peer], frames_.ack_header(), &at);
  if (h == nullptr) return nullptr;
  const wire::AckBody a = c.rx.make_ack(c.lane);
  const uint16_t dups = c.rx.take_duplicates() ? wire::kFlagDuplicates : 0;
  wire::write_ack(at, frames_.origin(), a, static_cast<uint16_t>(frames_.seal_flag() | dups));
  return h;
}

rte_mbuf* Node::build_abandoned(const Channel& c, uint32_t seq, const reliable::InFlight& e) {
  uint8_t* at;
  rte_mbuf* h = frames_.alloc_frame(addrs_[c.peer], frames_.data_header(), &at);
  if (h == nullptr) return nullptr;
  wire::DataBody b{};
  uint16_t flags = wire::kFlagAbandoned | wire::kFlagAckNow | frames_.seal_flag();
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
  wire::write_data(at, frames_.origin(), b, flags);
  frames_.put_payload_seal(at, wire::Seal{});
  return h;
}

}  // namespace lanecast::engine
