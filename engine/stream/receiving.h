// A member's streams, the receiving side (stream_receive.cc,
// stream_delivery.cc): batches from a stream's parent or the group address,
// checked and kept in the window and owed to the children; delivered in
// order to the application (its ring or handler: DeliveryTarget); marks
// moved and batches let go as the children report; gaps watched; a slow
// member's leaving; failures and evictions heard.
#pragma once

#include <rte_mbuf.h>

#include <atomic>
#include <cstdint>

#include "algos/types.h"
#include "engine/stream/delivery_target.h"
#include "engine/stream/stream_frames.h"
#include "engine/stream/stream_state.h"
#include "engine/stream/streams_core.h"
#include "engine/wire/stream_body.h"
#include "engine/wire/wire.h"

namespace lanecast::engine::stream {

class Streams;

class Receiving {
 public:
  Receiving(StreamsCore& core, Streams& streams, StreamFrames& frames)
      : core_(core), streams_(streams), frames_(frames), delivery_(core.counters.stream_delivery) {}
  Receiving(const Receiving&) = delete;
  Receiving& operator=(const Receiving&) = delete;

  // Where in-order messages go (delivery_target.h).
  RecordRingHeader* delivery_ring() const { return delivery_.ring(); }
  void set_handler(DeliveryTarget::Handler h) { delivery_.set_handler(std::move(h)); }
  // Whether this member left a stream for being slow.
  bool evicted() const { return evicted_.load(std::memory_order_acquire); }

  // A stream this member starts taking part in, made on its first frame.
  StreamState* open(uint16_t slot, algos::Rank publisher, uint16_t index, uint64_t now);
  // Keeps a batch in its slot and owes it to each child.
  void hold_batch(StreamState& s, uint64_t batch, rte_mbuf* payload, uint32_t len, uint32_t crc,
                  const wire::Seal& seal, uint32_t records, uint64_t first_msg, uint64_t now);
  // A stream's turn: delivers what waits, moves the marks, watches the gap,
  // tells of an eviction, reports. False when the streams failed meanwhile.
  bool turn(StreamState& s, uint64_t now);

  template <typename Accept>
  void handle_batch(rte_mbuf* m, const wire::Parsed& p, uint64_t now, Accept&& accept);
  void given_up(const wire::Parsed& p, uint64_t now);
  void handle_datagram(rte_mbuf* m, const wire::Parsed& p, uint64_t now);

 private:
  // stream_delivery.cc
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
  void handle_stream_multicast(rte_mbuf* m, const wire::Parsed& p, uint64_t now);

  StreamsCore& core_;
  Streams& streams_;             // its failure (Streams::fail)
  StreamFrames& frames_;         // reports and notices
  DeliveryTarget delivery_;      // the ring or handler in-order messages go to (delivery_target.h)
  std::atomic<bool> evicted_{false};  // this member left a stream for being slow
};

template <typename Accept>
void Receiving::handle_batch(rte_mbuf* m, const wire::Parsed& p, uint64_t now, Accept&& accept) {
  StreamState* s = checked_stream_batch(m, p, now);
  if (s == nullptr) return;
  const uint64_t batch = s->unwrap(wire::stream_body<wire::StreamBatch>(p).batch_low);
  switch (batch_fit(*s, batch)) {
    case BatchFit::Held:
      accept(true);  // had it: take it off the sender's hands
      core_.counters.rx_stream_duplicate.add();
      rte_pktmbuf_free(m);
      return;
    case BatchFit::Ahead:  // not acknowledged: the sender tries again
      core_.counters.rx_stream_ahead.add();
      rte_pktmbuf_free(m);
      return;
    case BatchFit::New:
      break;
  }
  accept(false);
  keep_stream_batch(*s, batch, m, p, now);
}

}  // namespace lanecast::engine::stream
