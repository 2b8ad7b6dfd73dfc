// BroadcastLink (node_links.h): what the node's running broadcast
// (broadcast.h) asks of it, as its BroadcastHost - owed segments and signals
// on the channels, whether the channels are done with it, and what its start
// and end do to the rest of the node.
#include "engine/node/node.h"

namespace lanecast::engine {

bool BroadcastLink::owe_segment(algos::Rank to, algos::SegmentIndex seg, algos::Lane lane) {
  return node_.channels_.owe_segment(node_.channel(to, lane), seg);
}

bool BroadcastLink::owe_signal(algos::Rank to, uint32_t tag) {
  return node_.channels_.owe_signal(node_.channel(to, 0), tag);
}

// Streams' batches share the channels; the broadcast waits only for its own.
bool BroadcastLink::channels_done(bool acked) const {
  const Channels& ch = node_.channels_;
  return ch.owed() == node_.streams_.owed() && (!acked || ch.unacked() == node_.streams_.unacked());
}

void BroadcastLink::broadcast_started(uint64_t now) {
  node_.channels_.restart_order();
  node_.resends_.note_deadline(now + node_.cfg_.peer_timeout_ns);  // the broadcast's own deadline
}

void BroadcastLink::broadcast_ended(uint64_t now, bool failed) {
  if (failed) node_.channels_.drop_broadcast(now);  // what it owed is dropped, what is in flight abandoned
  node_.channels_.after_broadcast();
}

void BroadcastLink::group_broken(uint64_t now, algos::Rank peer) {
  node_.streams_.fail(now, OpError::GroupBroken, peer);
}

}  // namespace lanecast::engine
