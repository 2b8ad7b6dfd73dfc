// A member's streams (docs/streams.md): the part of a node that owns every
// stream's state (StreamTable), the publishers the application handed over
// (PublisherIntake), where in-order messages go (DeliveryTarget), and what a
// turn needs to know of them all. It cuts a publisher's messages into
// batches, holds and forwards them, takes batches, reports, evictions and
// failures from other members, delivers in order, watches gaps, sends over
// the group address and repairs, and fails the streams.
//
//   streams.cc          set-up, the application's side, cutting batches, each turn, failure
//   stream_delivery.cc  batches held in the window, delivered in order, let go
//   stream_receive.cc   batches from the parent, reports from the children, failures and evictions heard
//   stream_frames.cc    the frames it sends: reports, notices, a batch to a child
//   stream_multicast.cc streams over the port's multicast, and their repair
//
// It reaches the node only through StreamHost (stream_host.h). The node
// hands it the stream frames it receives, asks it each turn to pump, and
// asks it for the frame of a batch its channels owe (build_frame): batches
// share the reliable channels with the broadcasts, which stay the node's.
//
// Threads: the application side's calls say so; everything else is the
// polling core's. Nothing on the per-frame path allocates, locks or enters
// the kernel; a stream's memory is made on its first frame.
#pragma once

#include <rte_mbuf.h>

#include <atomic>
#include <cstdint>
#include <memory>

#include "algos/types.h"
#include "drivers/port.h"
#include "engine/runtime/counter.h"
#include "engine/runtime/op_error.h"
#include "engine/stream/delivery_target.h"
#include "engine/stream/publisher_intake.h"
#include "engine/stream/stream_counters.h"
#include "engine/stream/stream_host.h"
#include "engine/stream/stream_state.h"
#include "engine/stream/stream_table.h"
#include "engine/wire/wire.h"
#include "lanecast/group_spec.h"

struct rte_mempool;

namespace lanecast::engine::auth {
class FrameAuth;
}

namespace lanecast::engine::stream {

class Streams {
 public:
  // The group's values the streams work with (the node's configuration).
  struct Config {
    algos::Rank rank = 0;
    uint32_t nodes = 1;
    uint32_t segment_bytes = 1400;
    uint64_t max_message_bytes = 16u << 20;
    uint64_t peer_timeout_ns = 3'000'000'000;
    lanecast::StreamOptions streams;  // fanout resolved (>= 1)
    wire::Origin origin;              // what every frame this member sends says of it
  };
  // The node's counters outside the streams' slice that stream work adds to.
  struct SharedCounters {
    Counter& root_copy_bytes;    // a publisher's bytes copied into batches
    Counter& delivered_bytes;    // bytes copied into the delivery ring
    Counter& tx_alloc_failures;  // a payload buffer the pool did not have
    Counter& bad_payload_crc;    // a batch whose CRC does not match
  };
  // How this member's frames are made, known once the node set up its seals
  // and joined its group addresses (connect()).
  struct Frames {
    auth::FrameAuth* auth = nullptr;  // a group with a key: the publisher seals its batches
    uint16_t seal_flag = 0;           // kFlagSealed with a key
    uint32_t hdr_data = wire::kDataHeaderBytes;  // a data frame's headers, with the seals
    uint16_t link_bytes = 0;
    rte_mempool* payload_pool = nullptr;  // batches are cut into its buffers
    const drivers::PeerAddress* addrs = nullptr;  // per rank
    // Lane 0's group address when the port multicasts (null: it does not,
    // and streams over multicast go down the tree like the others).
    const drivers::PeerAddress* group = nullptr;
  };
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
  bool offer(std::unique_ptr<PublisherShared> p) { return publishers_.offer(p); }
  // The ring of messages delivered here and not yet taken (null until this
  // member's first stream started): one consumer, the application.
  RecordRingHeader* delivery_ring() const { return delivery_.ring(); }
  // Instead of the ring: called on the core for every message delivered
  // here, in order. Set before any stream starts; it must not block.
  void set_message_handler(DeliveryTarget::Handler h) { delivery_.set_handler(std::move(h)); }
  // Why this member's streams stopped (None while they run), the peer it
  // names, and whether this member left a stream for being slow.
  OpError error() const { return static_cast<OpError>(stream_error_.load(std::memory_order_acquire)); }
  algos::Rank error_peer() const { return stream_error_peer_.load(std::memory_order_acquire); }
  bool evicted() const { return stream_evicted_.load(std::memory_order_acquire); }
  uint64_t max_message() const;
  // Slot i's counters (i < slots()), or null while no stream has used it.
  const StreamMirror* mirror(size_t i) const { return table_.mirror(i); }
  size_t slots() const { return table_.size(); }

  // ------------------------------------------------------------ the core's turn
  // Adopts new publishers, cuts batches, delivers, reports (streams.cc).
  void pump(uint64_t now) {
    if (table_.any_open() || publishers_.waiting()) pump_streams(now);
  }
  bool busy() const { return streams_busy_; }         // a stream has work: keep polling
  bool waiting() const { return publishers_.waiting(); }  // a publisher waits to be adopted
  uint64_t due_ns() const { return stream_due_ns_; }  // the next report, refresh or batch
  bool failed() const { return streams_failed_; }
  // This member's streams stop (a peer silent with batches in flight, a
  // broken group, a child or parent that gave up): idempotent.
  void fail(uint64_t now, OpError err, algos::Rank peer);

  // ------------------------------------------------------------ the channels' share
  // Owed items that are batches, and frames in flight that are: the
  // broadcast running beside them waits only for its own.
  uint64_t owed() const { return stream_owed_; }
  uint64_t unacked() const { return stream_unacked_; }
  void acked(uint64_t batches) { stream_unacked_ -= batches; }
  // Whether a stream's slot still holds a batch (not let go yet), and its bytes.
  bool holds(uint16_t slot, uint32_t batch_low) const {
    const StreamState& s = *table_.at(slot);
    const BatchSlot& b = s.slots[batch_low & s.mask];
    return b.payload != nullptr && static_cast<uint32_t>(b.batch) == batch_low;
  }
  uint32_t batch_bytes(uint16_t slot, uint32_t batch_low) const {
    const StreamState& s = *table_.at(slot);
    return s.slots[batch_low & s.mask].len;
  }
  // An owed batch let go before it was sent: the item is done.
  void let_go() { --stream_owed_; }
  // The frame carrying a held batch to `peer` on its channel (first sent or
  // sent again); null when it is let go or a pool is empty.
  rte_mbuf* build_frame(algos::Rank peer, uint16_t lane, uint16_t slot, uint32_t batch_low, uint32_t seq,
                        uint16_t flags);
  // An owed batch's frame went out (in flight now).
  void sent(uint16_t slot, algos::Rank peer, uint32_t batch_low);
  // The stream a slot holds (an abandoned batch's frame names it).
  const StreamState& state(uint16_t slot) const { return *table_.at(slot); }

  // ------------------------------------------------------------ receive
  // A batch on a reliable channel, from the stream's parent as it must be:
  // checked, then accept(bool held) lets the node take it on its channel
  // (held: this member had it already) before it is kept. Takes the frame.
  template <typename Accept>
  void handle_batch(rte_mbuf* m, const wire::Parsed& p, uint64_t now, Accept&& accept);
  // A batch its parent sent again empty (abandoned).
  void given_up(const wire::Parsed& p, uint64_t now);
  // A stream datagram: a report, an eviction notice, or a batch from the
  // group address. Takes the frame.
  void handle_datagram(rte_mbuf* m, const wire::Parsed& p, uint64_t now);

  size_t bytes() const { return table_.bytes(); }
  // Every batch still held, back to its pool (the node goes).
  void free_batches() { table_.free_batches(); }

 private:
  // streams.cc
  void pump_streams(uint64_t now);
  void take_publishers(uint64_t now);
  StreamState* open_stream_state(uint16_t slot, algos::Rank publisher, uint16_t index, uint64_t now);
  bool form_batch(StreamState& s, uint64_t now);
  void tell_parents(uint64_t now);
  // stream_delivery.cc
  void hold_batch(StreamState& s, uint64_t batch, rte_mbuf* payload, uint32_t len, uint32_t crc,
                  const wire::Seal& seal, uint32_t records, uint64_t first_msg, uint64_t now);
  void deliver_stream(StreamState& s, uint64_t now);
  bool deliver_message(StreamState& s, const uint8_t* rec, uint32_t* used);
  void note_delivered(StreamState& s, uint64_t bytes);
  void update_marks(StreamState& s, uint64_t now);
  void release_batches(StreamState& s, uint64_t below);
  // stream_receive.cc
  // The checks every batch passes, however it came: from the stream's
  // parent, sized, contiguous, its CRC or seal, well-formed records. The
  // stream's state, or null with the frame freed and the reason counted.
  StreamState* checked_stream_batch(rte_mbuf* m, const wire::Parsed& p, uint64_t now);
  enum class BatchFit : uint8_t { New, Held, Ahead };
  static BatchFit batch_fit(const StreamState& s, uint64_t batch);
  void keep_stream_batch(StreamState& s, uint64_t batch, rte_mbuf* m, const wire::Parsed& p, uint64_t now);
  void handle_stream_report(const wire::Parsed& p, uint64_t now);
  // A child's reports that keep lacking batches let go here for this long
  // fail the streams (handle_stream_report): five of a stalled child's
  // refreshes, far longer than a network holds an old report back.
  static constexpr uint64_t kChildLacksNs = 5'000'000;
  void tell_failed(const wire::Parsed& p, uint64_t now);
  void watch_gap(StreamState& s, uint64_t now);
  void evict_self(StreamState& s, uint64_t now);
  void handle_stream_eviction(const wire::Parsed& p);
  // stream_frames.cc
  bool send_report(StreamState& s, uint64_t now, uint16_t flags = 0);
  // `held`: the member holds every batch below it (its own, not its
  // subtree's: read only by a publisher over multicast, whose children are leaves).
  bool report_to(algos::Rank parent, algos::Rank publisher, uint16_t index, uint64_t mark, uint32_t slowest,
                 uint16_t flags, uint64_t now, uint64_t held = 0, uint32_t gap = 0);
  void tell_eviction(StreamState& s, uint64_t now);
  void note_sent_to_child(StreamState& s, algos::Rank child, uint32_t batch_low);
  rte_mbuf* build_batch_frame(const drivers::PeerAddress& to, const StreamState& s, const BatchSlot& b,
                              uint32_t seq, uint8_t lane, uint16_t flags, wire::FrameType type);
  // A data frame's payload seal (a group with a key), after its body.
  void put_payload_seal(uint8_t* at, const wire::Seal& seal) const {
    if (auth_ != nullptr) wire::write_payload_seal(at, seal);
  }
  // stream_multicast.cc
  void multicast_batches(StreamState& s, uint64_t now);
  bool multicast_may_form(StreamState& s, uint64_t now);
  static constexpr uint64_t kMaxBatchGapNs = 100'000, kBatchGapStepNs = 100'000;
  static constexpr uint32_t kMulticastBatchesPerTurn = 16;  // full batches a publisher's turn cuts and sends
  void repair_batches(StreamState& s, uint64_t now);
  void handle_stream_multicast(rte_mbuf* m, const wire::Parsed& p, uint64_t now);

  Config cfg_;
  StreamHost& host_;
  StreamCounters& counters_;
  SharedCounters shared_;
  // connect()'s
  auth::FrameAuth* auth_ = nullptr;
  uint16_t seal_flag_ = 0;
  uint32_t hdr_data_ = wire::kDataHeaderBytes;
  uint16_t link_bytes_ = 0;
  rte_mempool* payload_pool_ = nullptr;
  const drivers::PeerAddress* addrs_ = nullptr;
  drivers::PeerAddress group_addr_{};

  uint64_t stream_owed_ = 0;          // owed items that are streams' batches
  uint64_t stream_unacked_ = 0;       // frames in flight that are streams' batches
  uint64_t stream_due_ns_ = UINT64_MAX;  // the next report or refresh
  bool streams_busy_ = false;         // a stream has work: keep the core polling
  // Its streams go to the group address (StreamOptions::multicast, and the
  // port multicasts); a quiet stream's last batches that a member has not
  // had are sent to it again this long after they went out.
  bool stream_multicast_ = false;
  uint64_t stream_repair_ns_ = 0;
  bool streams_failed_ = false;
  static constexpr uint64_t kNeverTold = UINT64_MAX;
  uint64_t streams_first_told_ns_ = kNeverTold;  // since their failure: the parents are told for a while after
  uint64_t streams_told_ns_ = 0;      // the parents were told last
  std::atomic<uint8_t> stream_error_{0};
  std::atomic<bool> stream_evicted_{false};  // this member left a stream for being slow
  std::atomic<uint32_t> stream_error_peer_{algos::kNoRank};

  DeliveryTarget delivery_;      // the ring or handler in-order messages go to (delivery_target.h)
  StreamTable table_;            // every stream's state by slot, in the order they opened (stream_table.h)
  PublisherIntake publishers_;   // publishers handed over by the application (publisher_intake.h)
};

template <typename Accept>
void Streams::handle_batch(rte_mbuf* m, const wire::Parsed& p, uint64_t now, Accept&& accept) {
  StreamState* s = checked_stream_batch(m, p, now);
  if (s == nullptr) return;
  const uint64_t batch = s->unwrap(p.data.segment);
  switch (batch_fit(*s, batch)) {
    case BatchFit::Held:
      accept(true);  // had it: take it off the sender's hands
      counters_.rx_stream_duplicate.add();
      rte_pktmbuf_free(m);
      return;
    case BatchFit::Ahead:  // not acknowledged: the sender tries again
      counters_.rx_stream_ahead.add();
      rte_pktmbuf_free(m);
      return;
    case BatchFit::New:
      break;
  }
  accept(false);
  keep_stream_batch(*s, batch, m, p, now);
}

}  // namespace lanecast::engine::stream
