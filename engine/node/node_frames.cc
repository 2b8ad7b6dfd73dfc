// Node: the acks it sends, in header mbufs from frames_ (frame_builder.h).
// The transmit path (node_tx.cc) decides when; data and signal frames are
// the broadcast's (broadcast.cc) and the streams', abandoned frames the
// resends' (node_resends.cc).
#include <rte_mbuf.h>

#include <algorithm>

#include "engine/auth/frame_auth.h"
#include "engine/checksum/crc32c.h"
#include "engine/node/node.h"

namespace lanecast::engine {

using algos::Rank;
using algos::SegmentIndex;

rte_mbuf* Node::build_ack(Channel& c) {
  uint8_t* at;
  rte_mbuf* h = frames_.alloc_frame(addrs_[c.peer], frames_.ack_header(), &at);
  if (h == nullptr) return nullptr;
  const wire::AckBody a = c.rx.make_ack(c.lane);
  const uint16_t dups = c.rx.take_duplicates() ? wire::kFlagDuplicates : 0;
  wire::write_ack(at, frames_.origin(), a, static_cast<uint16_t>(frames_.seal_flag() | dups));
  return h;
}

}  // namespace lanecast::engine
