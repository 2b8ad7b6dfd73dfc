// StreamsLink (node_links.h): what the node's streams
// (engine/stream/streams.h) ask of it, as their StreamHost - frames from its
// FrameBuilder, payload seals and payloads of received frames, the lanes,
// the channels' owed runs, and what their failure does to the rest of the
// node.
#include <rte_mbuf.h>

#include "engine/node/node.h"
#include "engine/node/payload_reads.h"

namespace lanecast::engine {

rte_mbuf* StreamsLink::alloc_frame(const drivers::PeerAddress& to, uint16_t header_bytes, uint8_t** body) {
  return node_.frames_.alloc_frame(to, header_bytes, body);
}

rte_mbuf* StreamsLink::attach_payload(rte_mbuf* h, rte_mbuf* payload) {
  return node_.frames_.attach_payload(h, payload);
}

rte_mbuf* StreamsLink::detach_payload(rte_mbuf* m, uint32_t payload_offset) {
  return payload_of(m, payload_offset, node_.frames_.spent_headers());
}

bool StreamsLink::seal_ok(const uint8_t* bytes, uint32_t len, const wire::Parsed& p) {
  return payload_seal_ok(node_.auth_.get(), node_.counters_.rx_bad_payload_seal, bytes, len, p);
}

bool StreamsLink::lane_room(uint16_t lane, uint32_t frame_bytes, uint64_t now, bool datagram) {
  return node_.tx_lanes_.room(lane, frame_bytes, now, datagram);
}

void StreamsLink::push(uint16_t lane, rte_mbuf* m) { node_.tx_lanes_.push(lane, m); }

bool StreamsLink::owe_batch(algos::Rank child, uint32_t batch_low, uint16_t slot) {
  return node_.channels_.owe_batch(node_.channel(child, 0), batch_low, slot);
}

void StreamsLink::grow_runs(uint32_t extra) { node_.channels_.grow_runs(extra); }

void StreamsLink::internal_error() { node_.broadcast_.internal_error(); }

// In a group of processes a member whose streams stopped is lost to the
// group for this epoch: every member hears it (failure notices) instead of
// finding out at its own timeout. What the channels owe is dropped and what
// they have in flight abandoned (streams' batches too), so they stay in
// step; the broadcast running beside the streams fails with them.
void StreamsLink::streams_failed(uint64_t now, OpError err, algos::Rank peer) {
  Node& n = node_;
  if (err != OpError::GroupBroken) n.fail_stop_.saw(n.broadcast_.current_op(), err, peer);
  n.channels_.drop_everything(now);  // owed dropped, in flight abandoned, lists emptied
  n.broadcast_.fail(now, err, peer);
}

}  // namespace lanecast::engine
