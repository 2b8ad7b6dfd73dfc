// What the running broadcast and the streams ask of the node they run in,
// each in its own small class: BroadcastLink is the broadcast's
// BroadcastHost (node_broadcast.cc), StreamsLink the streams' StreamHost
// (node_streams.cc). Each holds its node and reaches its parts (channels,
// lanes, frames, fail-stop) as a friend, so Node's own interface stays what
// applications and the polling core use.
//
// Final classes: the calls come per owed segment or batch, per frame the
// streams build, or per broadcast, as when the node itself was the host.
#pragma once

#include <cstdint>

#include "engine/node/broadcast_host.h"
#include "engine/stream/stream_host.h"

namespace lanecast::engine {

class Node;

class BroadcastLink final : public BroadcastHost {
 public:
  explicit BroadcastLink(Node& node) : node_(node) {}

  bool owe_segment(algos::Rank to, algos::SegmentIndex seg, algos::Lane lane) override;
  bool owe_signal(algos::Rank to, uint32_t tag) override;
  bool channels_done(bool acked) const override;
  void broadcast_started(uint64_t now) override;
  void broadcast_ended(uint64_t now, bool failed) override;
  void group_broken(uint64_t now, algos::Rank peer) override;

 private:
  Node& node_;
};

class StreamsLink final : public stream::StreamHost {
 public:
  explicit StreamsLink(Node& node) : node_(node) {}

  rte_mbuf* alloc_frame(const drivers::PeerAddress& to, uint16_t header_bytes, uint8_t** body) override;
  rte_mbuf* attach_payload(rte_mbuf* header, rte_mbuf* payload) override;
  rte_mbuf* detach_payload(rte_mbuf* m, uint32_t payload_offset) override;
  bool seal_ok(const uint8_t* bytes, uint32_t len, const wire::Parsed& p) override;
  bool lane_room(uint16_t lane, uint32_t frame_bytes, uint64_t now, bool datagram) override;
  void push(uint16_t lane, rte_mbuf* m) override;
  bool owe_batch(algos::Rank child, uint32_t batch_low, uint16_t slot) override;
  void grow_runs(uint32_t extra) override;
  void internal_error() override;
  void streams_failed(uint64_t now, OpError err, algos::Rank peer) override;

 private:
  Node& node_;
};

}  // namespace lanecast::engine
