// Node: what its streams (engine/stream/streams.h) ask of it, as their
// StreamHost - the lanes, the channels' owed runs, and what their failure
// does to the rest of the node. The frame helpers they share with the
// broadcasts (alloc_frame, attach_payload, detach_payload, seal_ok) are in
// node_frames.cc and node_rx.cc.
#include <rte_mbuf.h>

#include "engine/node/node.h"

namespace lanecast::engine {

bool Node::lane_room(uint16_t lane, uint32_t frame_bytes, uint64_t now, bool datagram) {
  return tx_lanes_.room(lane, frame_bytes, now, datagram);
}

void Node::push(uint16_t lane, rte_mbuf* m) { tx_lanes_.push(lane, m); }

bool Node::owe_batch(algos::Rank child, uint32_t batch_low, uint16_t slot) {
  return channels_.owe_batch(channel(child, 0), batch_low, slot);
}

void Node::grow_runs(uint32_t extra) { channels_.grow_runs(extra); }

void Node::internal_error() { broadcast_.internal_error(); }

// In a group of processes a member whose streams stopped is lost to the
// group for this epoch: every member hears it (failure notices) instead of
// finding out at its own timeout. What the channels owe is dropped and what
// they have in flight abandoned (streams' batches too), so they stay in
// step; the broadcast running beside the streams fails with them.
void Node::streams_failed(uint64_t now, OpError err, algos::Rank peer) {
  if (err != OpError::GroupBroken) fail_stop_.saw(broadcast_.current_op(), err, peer);
  channels_.drop_everything(now);  // owed dropped, in flight abandoned, lists emptied
  broadcast_.fail(now, err, peer);
}

}  // namespace lanecast::engine
