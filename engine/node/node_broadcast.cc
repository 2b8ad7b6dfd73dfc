// Node: what its running broadcast (broadcast.h) asks of it, as its
// BroadcastHost - owed segments and signals on the channels, whether the
// channels are done with it, and what its start and end do to the rest of
// the node.
#include "engine/node/node.h"

namespace lanecast::engine {

bool Node::owe_segment(algos::Rank to, algos::SegmentIndex seg, algos::Lane lane) {
  return channels_.owe_segment(channel(to, lane), seg);
}

bool Node::owe_signal(algos::Rank to, uint32_t tag) { return channels_.owe_signal(channel(to, 0), tag); }

// Streams' batches share the channels; the broadcast waits only for its own.
bool Node::channels_done(bool acked) const {
  return channels_.owed() == streams_.owed() && (!acked || channels_.unacked() == streams_.unacked());
}

void Node::broadcast_started(uint64_t now) {
  channels_.restart_order();
  note_deadline(now + cfg_.peer_timeout_ns);  // the broadcast's own deadline
}

void Node::broadcast_ended(uint64_t now, bool failed) {
  if (failed) channels_.drop_broadcast(now);  // what it owed is dropped, what is in flight abandoned
  channels_.after_broadcast();
}

void Node::group_broken(uint64_t now, algos::Rank peer) { streams_.fail(now, OpError::GroupBroken, peer); }

}  // namespace lanecast::engine
