// What a member's streams (streams.h) need of the node they run in: frames
// to fill and send on a lane, a batch owed to a child over its reliable
// channel, a payload's seal checked, and the node told when something
// goes wrong. The node implements it (StreamsLink, engine/node/node_links.h);
// the streams know nothing else of it.
//
// An abstract class rather than a template: the streams' code stays in its
// own files, compiled once, and the node's headers stay out of them. Its
// calls are per batch, report or notice, never per message, so each is one
// indirect call beside a frame's work; the per-frame calls the other way
// (the node's transmit path asking Streams for a batch's frame) are plain
// calls on a concrete class.
#pragma once

#include <cstdint>

#include "algos/types.h"
#include "drivers/port.h"
#include "engine/runtime/op_error.h"
#include "engine/wire/wire.h"

struct rte_mbuf;

namespace lanecast::engine::stream {

class StreamHost {
 public:
  // A header mbuf holding the link header to `to` and room for
  // `header_bytes` of lanecast's headers at *body; null when the header
  // pool is empty (counted).
  virtual rte_mbuf* alloc_frame(const drivers::PeerAddress& to, uint16_t header_bytes, uint8_t** body) = 0;
  // `header` chained to `payload` by reference (flattened for a port that
  // cannot send chains); null when that failed (both freed).
  virtual rte_mbuf* attach_payload(rte_mbuf* header, rte_mbuf* payload) = 0;
  // A received frame reduced to its payload, no byte copied.
  virtual rte_mbuf* detach_payload(rte_mbuf* m, uint32_t payload_offset) = 0;
  // A payload's seal, by whoever the frame names (always true without a
  // key); a failure counted.
  virtual bool seal_ok(const uint8_t* bytes, uint32_t len, const wire::Parsed& p) = 0;
  // Room on `lane` for a frame of `frame_bytes` now (its pacer charged);
  // `datagram`: no ack will cover it. Then push() queues it.
  virtual bool lane_room(uint16_t lane, uint32_t frame_bytes, uint64_t now, bool datagram) = 0;
  virtual void push(uint16_t lane, rte_mbuf* m) = 0;
  // A batch owed to `child` over its channel on lane 0, sent when the
  // channels' order comes to it (the node asks Streams::build_frame for
  // it). False when the owed runs ran out.
  virtual bool owe_batch(algos::Rank child, uint32_t batch_low, uint16_t slot) = 0;
  // More owed runs: a stream opened with this many children's windows.
  virtual void grow_runs(uint32_t extra) = 0;
  // Something impossible was asked (a batch owed that was never formed).
  virtual void internal_error() = 0;
  // This member's streams failed: the node tells its fail-stop group, drops
  // what its channels owe and abandons what they have in flight, and fails
  // a broadcast that runs.
  virtual void streams_failed(uint64_t now, OpError err, algos::Rank peer) = 0;

 protected:
  ~StreamHost() = default;
};

}  // namespace lanecast::engine::stream
