// The frames a member's streams send (stream_frames.cc): reports up a
// stream's tree, eviction notices, and a held batch's frame - to a child
// over its channel (the frame the node's transmit path asks for) or to the
// group address. It knows how this member's frames are made (its seals,
// headers, addresses), so the other parts ask it instead of keeping a copy.
#pragma once

#include <rte_mbuf.h>

#include <cstdint>

#include "algos/types.h"
#include "drivers/port.h"
#include "engine/stream/stream_state.h"
#include "engine/stream/streams_core.h"
#include "engine/wire/wire.h"

namespace lanecast::engine::stream {

class StreamFrames {
 public:
  explicit StreamFrames(StreamsCore& core) : core_(core) {}
  StreamFrames(const StreamFrames&) = delete;
  StreamFrames& operator=(const StreamFrames&) = delete;
  void connect(const StreamsFraming& f);

  auth::FrameAuth* auth() const { return auth_; }
  rte_mempool* payload_pool() const { return payload_pool_; }
  const drivers::PeerAddress& group() const { return group_addr_; }
  // A frame's bytes on the link with a payload of `payload` bytes.
  uint32_t frame_bytes(uint32_t payload) const { return link_bytes_ + hdr_data_ + payload; }

  // A report to the parent; `flags` kFlagAbandoned: this member's streams
  // failed. False when the lane had no room or the pool no buffer.
  bool send_report(StreamState& s, uint64_t now, uint16_t flags = 0);
  // `held`: the member holds every batch below it (its own, not its
  // subtree's: read only by a publisher over multicast, whose children are leaves).
  bool report_to(algos::Rank parent, algos::Rank publisher, uint16_t index, uint64_t mark, uint32_t slowest,
                 uint16_t flags, uint64_t now, uint64_t held = 0, uint32_t gap = 0);
  void tell_eviction(StreamState& s, uint64_t now);
  // A batch went to a child over its channel: what it may now say it has.
  void note_sent_to_child(StreamState& s, algos::Rank child, uint32_t batch_low);
  // The frame carrying a held batch to `peer` on its channel; null when it
  // is let go or a pool is empty.
  rte_mbuf* build_frame(algos::Rank peer, uint16_t lane, uint16_t slot, uint32_t batch_low, uint32_t seq,
                        uint16_t flags);
  rte_mbuf* build_batch_frame(const drivers::PeerAddress& to, const StreamState& s, const BatchSlot& b,
                              uint32_t seq, uint8_t lane, uint16_t flags, wire::FrameType type);

 private:
  // A data frame's payload seal (a group with a key), after its body.
  void put_payload_seal(uint8_t* at, const wire::Seal& seal) const {
    if (auth_ != nullptr) wire::write_payload_seal(at, seal);
  }

  StreamsCore& core_;
  auth::FrameAuth* auth_ = nullptr;
  uint16_t seal_flag_ = 0;
  uint32_t hdr_data_ = wire::kDataHeaderBytes;
  uint16_t link_bytes_ = 0;
  rte_mempool* payload_pool_ = nullptr;
  const drivers::PeerAddress* addrs_ = nullptr;
  drivers::PeerAddress group_addr_{};
};

}  // namespace lanecast::engine::stream
