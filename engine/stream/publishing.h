// A member's streams, the publisher's side (publishing.cc,
// stream_multicast.cc): it adopts the publishers the application handed
// over, cuts what they published into batches (form_batch) and, over
// multicast, sends each batch to the group address and repairs what a
// member lacks over its channel. A batch it cuts is held and owed to the
// children like any other (Receiving::hold_batch).
#pragma once

#include <cstdint>
#include <memory>

#include "engine/stream/publisher_intake.h"
#include "engine/stream/stream_frames.h"
#include "engine/stream/stream_state.h"
#include "engine/stream/streams_core.h"

namespace lanecast::engine::stream {

class Streams;
class Receiving;

class Publishing {
 public:
  Publishing(StreamsCore& core, Streams& streams, StreamFrames& frames, Receiving& receiving)
      : core_(core), streams_(streams), frames_(frames), receiving_(receiving) {}
  Publishing(const Publishing&) = delete;
  Publishing& operator=(const Publishing&) = delete;
  // A quiet stream's last batches a member has not had are sent to it again
  // this long after they went out (over multicast).
  void connect(uint64_t repair_ns) { repair_ns_ = repair_ns; }

  // Application side: a publisher handed over; false when too many wait.
  bool offer(std::unique_ptr<PublisherShared> p) { return publishers_.offer(p); }
  bool waiting() const { return publishers_.waiting(); }
  // Every adopted publisher learns that the streams failed.
  void fail_all(uint8_t err, algos::Rank peer) { publishers_.fail_all(err, peer); }
  // Adopts the publishers waiting: each stream's state made, its ring read.
  void adopt(uint64_t now);
  // A publisher's stream's turn: what waits is cut into batches (and sent
  // to the group address, and repaired).
  void turn(StreamState& s, uint64_t now);
  // One batch of what waits in the publisher's ring; false when there is
  // nothing to send or no slot free in the window.
  bool form_batch(StreamState& s, uint64_t now);

 private:
  // stream_multicast.cc
  void multicast_batches(StreamState& s, uint64_t now);
  bool multicast_may_form(StreamState& s, uint64_t now);
  static constexpr uint64_t kMaxBatchGapNs = 100'000, kBatchGapStepNs = 100'000;
  static constexpr uint32_t kMulticastBatchesPerTurn = 16;  // full batches a publisher's turn cuts and sends
  void repair_batches(StreamState& s, uint64_t now);

  StreamsCore& core_;
  Streams& streams_;        // its failure (Streams::fail)
  StreamFrames& frames_;
  Receiving& receiving_;    // where a batch cut is held and owed
  PublisherIntake publishers_;  // publishers handed over by the application (publisher_intake.h)
  uint64_t repair_ns_ = 0;
};

}  // namespace lanecast::engine::stream
