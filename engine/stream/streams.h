// A member's streams (docs/streams.md), as the node sees them: one facade
// over three parts - Publishing (publishing.h), Receiving (receiving.h) and
// StreamFrames (stream_frames.h) - and what they share (StreamsCore,
// streams_core.h); streams.cc runs each turn and the streams' failure.
// Batches share the node's reliable channels with the broadcasts, so the
// node's transmit path asks here for an owed batch's frame (build_frame).
// It reaches the node only through StreamHost (stream_host.h). The
// application side's calls say so; the rest is the polling core's, and
// nothing on the per-frame path allocates, locks or enters the kernel.
#pragma once

#include <rte_mbuf.h>

#include <atomic>
#include <cstdint>
#include <memory>

#include "algos/types.h"
#include "engine/runtime/op_error.h"
#include "engine/stream/publishing.h"
#include "engine/stream/receiving.h"
#include "engine/stream/stream_frames.h"
#include "engine/stream/stream_state.h"
#include "engine/stream/streams_core.h"
#include "engine/wire/wire.h"

namespace lanecast::engine::stream {

class Streams {
 public:
  using Config = StreamsConfig;
  using SharedCounters = StreamsSharedCounters;
  using Frames = StreamsFraming;
  // Streams carry messages below 2 GiB: a message's length with the heads
  // in front of it (8 bytes of time stamp in the publisher's ring, 24 in a
  // delivery ring) fits the rings' and the wire's 32-bit record lengths with
  // room to spare. Larger messages go by broadcast.
  static constexpr uint64_t kMaxMessage = (uint64_t{1} << 31) - 64;

  // Throws std::invalid_argument when the stream options are out of range.
  Streams(const Config& cfg, StreamHost& host, StreamCounters& counters, const SharedCounters& shared);
  ~Streams() { free_batches(); }
  Streams(const Streams&) = delete;
  Streams& operator=(const Streams&) = delete;
  void connect(const Frames& frames);

  // ------------------------------------------------------------ application side
  // A publisher the application made (Member::open_stream), owned from here
  // on; the core takes it at its next turn. False when too many are waiting.
  bool offer(std::unique_ptr<PublisherShared> p) { return publishing_.offer(std::move(p)); }
  // The ring of messages delivered here and not yet taken (null until this
  // member's first stream started): one consumer, the application.
  RecordRingHeader* delivery_ring() const { return receiving_.delivery_ring(); }
  // Instead of the ring: called on the core for every message delivered
  // here, in order. Set before any stream starts; it must not block.
  void set_message_handler(DeliveryTarget::Handler h) { receiving_.set_handler(std::move(h)); }
  // Why this member's streams stopped (None while they run), the peer it
  // names, and whether this member left a stream for being slow.
  OpError error() const { return static_cast<OpError>(stream_error_.load(std::memory_order_acquire)); }
  algos::Rank error_peer() const { return stream_error_peer_.load(std::memory_order_acquire); }
  bool evicted() const { return receiving_.evicted(); }
  uint64_t max_message() const { return core_.max_message; }
  // Slot i's counters (i < slots()), or null while no stream has used it.
  const StreamMirror* mirror(size_t i) const { return core_.table.mirror(i); }
  size_t slots() const { return core_.table.size(); }

  // ------------------------------------------------------------ the core's turn
  // Adopts new publishers, cuts batches, delivers, reports (streams.cc).
  void pump(uint64_t now) {
    if (core_.table.any_open() || publishing_.waiting()) pump_streams(now);
  }
  bool busy() const { return core_.busy; }                // a stream has work: keep polling
  bool waiting() const { return publishing_.waiting(); }  // a publisher waits to be adopted
  uint64_t due_ns() const { return core_.due_ns; }        // the next report, refresh or batch
  bool failed() const { return core_.failed; }
  // This member's streams stop (a peer silent with batches in flight, a
  // broken group, a child or parent that gave up): idempotent.
  void fail(uint64_t now, OpError err, algos::Rank peer);

  // ------------------------------------------------------------ the channels' share
  // Owed items that are batches, and frames in flight that are: the
  // broadcast running beside them waits only for its own.
  uint64_t owed() const { return core_.owed; }
  uint64_t unacked() const { return core_.unacked; }
  void acked(uint64_t batches) { core_.unacked -= batches; }
  // Whether a stream's slot still holds a batch (not let go yet), and its bytes.
  bool holds(uint16_t slot, uint32_t batch_low) const {
    const StreamState& s = *core_.table.at(slot);
    const BatchSlot& b = s.slots[batch_low & s.mask];
    return b.payload != nullptr && static_cast<uint32_t>(b.batch) == batch_low;
  }
  uint32_t batch_bytes(uint16_t slot, uint32_t batch_low) const {
    const StreamState& s = *core_.table.at(slot);
    return s.slots[batch_low & s.mask].len;
  }
  // An owed batch let go before it was sent: the item is done.
  void let_go() { --core_.owed; }
  // The frame carrying a held batch to `peer` on its channel (first sent or
  // sent again); null when it is let go or a pool is empty.
  rte_mbuf* build_frame(algos::Rank peer, uint16_t lane, uint16_t slot, uint32_t batch_low, uint32_t seq,
                        uint16_t flags) {
    return frames_.build_frame(peer, lane, slot, batch_low, seq, flags);
  }
  // An owed batch's frame went out (in flight now).
  void sent(uint16_t slot, algos::Rank peer, uint32_t batch_low) {
    core_.counters.stream_batches_tx.add();
    --core_.owed;
    ++core_.unacked;
    frames_.note_sent_to_child(*core_.table.at(slot), peer, batch_low);
  }
  // The stream a slot holds (an abandoned batch's frame names it).
  const StreamState& state(uint16_t slot) const { return *core_.table.at(slot); }

  // ------------------------------------------------------------ receive
  // A batch on a reliable channel, from the stream's parent as it must be:
  // checked, then accept(bool held) lets the node take it on its channel
  // (held: this member had it already) before it is kept. Takes the frame.
  template <typename Accept>
  void handle_batch(rte_mbuf* m, const wire::Parsed& p, uint64_t now, Accept&& accept) {
    receiving_.handle_batch(m, p, now, std::forward<Accept>(accept));
  }
  // A batch its parent sent again empty (abandoned).
  void given_up(const wire::Parsed& p, uint64_t now) { receiving_.given_up(p, now); }
  // A stream datagram: a report, an eviction notice, or a batch from the
  // group address. Takes the frame.
  void handle_datagram(rte_mbuf* m, const wire::Parsed& p, uint64_t now) { receiving_.handle_datagram(m, p, now); }

  size_t bytes() const { return core_.table.bytes(); }
  // Every batch still held, back to its pool (the node goes).
  void free_batches() { core_.table.free_batches(); }

 private:
  void pump_streams(uint64_t now);
  void tell_parents(uint64_t now);

  StreamsCore core_;
  StreamFrames frames_;
  Receiving receiving_;
  Publishing publishing_;
  static constexpr uint64_t kNeverTold = UINT64_MAX;
  uint64_t streams_first_told_ns_ = kNeverTold;  // since their failure: the parents are told for a while after
  uint64_t streams_told_ns_ = 0;      // the parents were told last
  std::atomic<uint8_t> stream_error_{0};
  std::atomic<uint32_t> stream_error_peer_{algos::kNoRank};
};

}  // namespace lanecast::engine::stream
