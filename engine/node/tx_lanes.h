// A node's transmit lanes, the part that owns them: per lane, the batch of
// frames the next flush hands to the port, and the pacer that keeps the
// lane at its link's rate (pacer.h). With a group key each frame is sealed
// as its batch leaves, in the order it goes, so a receiver's anti-replay
// window sees counters nearly in order; the tag covers the link header, so
// a frame opens only at the address it was sent to. Frames a full port
// left behind keep their seals and go first next time: never a spin on a
// full ring.
//
// Everything on the polling core's hot path is inline; nothing allocates.
#pragma once

#include <rte_mbuf.h>

#include <algorithm>
#include <cstdint>

#include "drivers/port.h"
#include "engine/auth/frame_auth.h"
#include "engine/node/pacer.h"
#include "engine/runtime/counter.h"

namespace lanecast::engine {

class TxLanes {
 public:
  static constexpr uint16_t kMaxLanes = 4;
  static constexpr uint16_t kCap = 256;  // frames per lane per flush

  struct Counters {
    Counter paced;      // times a lane waited for its pacer
    Counter ring_full;  // frames the port did not take: kept, sent next flush
  };

  // `pace_overhead`: bytes the link adds to each frame as its rate counts them.
  TxLanes(uint16_t lanes, uint16_t link_bytes, uint32_t pace_overhead, Counters& counters)
      : lanes_(lanes), link_bytes_(link_bytes), pace_overhead_(pace_overhead), counters_(counters) {}

  // The pacers' bursts: `fixed_bytes` if given, else 200 us of the lane's
  // rate, at least `min_bytes` and at most `max_bytes`. Set before pace()
  // or set_rate().
  void burst_rule(uint64_t fixed_bytes, uint64_t min_bytes, uint64_t max_bytes = UINT64_MAX) {
    fixed_burst_ = fixed_bytes;
    min_burst_ = min_bytes;
    max_burst_ = std::max(min_bytes, max_bytes);
  }
  // Each lane at most `rate_bps`.
  void pace(uint64_t rate_bps) {
    for (uint16_t l = 0; l < lanes_; ++l) pacers_[l] = Pacer(rate_bps, burst_for(rate_bps));
  }
  // A lane's rate as a rate controller moves it.
  void set_rate(uint16_t lane, uint64_t rate_bps, uint64_t now) {
    pacers_[lane].set_rate(rate_bps, burst_for(rate_bps), now);
  }
  // A group with a key: frames are sealed with `auth` as they leave.
  // Frames are sealed from the last `sealed_link` bytes of their link header.
  void seal_with(auth::FrameAuth* auth, uint16_t sealed_link) {
    auth_ = auth;
    sealed_link_ = sealed_link;
  }

  // Room for one frame of `frame_bytes` on `lane` now: the lane's batch is
  // not full and its pacer allows it (and is charged). When the pacer says
  // no, paced_until() says when it will say yes.
  // `datagram`: a frame no ack will cover (a multicast copy).
  bool room(uint16_t lane, uint32_t frame_bytes, uint64_t now, bool datagram = false) {
    if (q_[lane].count == kCap) return false;
    const uint32_t bytes = link_bytes(frame_bytes);
    if (pacers_[lane].take(now, bytes)) {
      sent_bytes_[lane] += bytes;
      if (datagram) datagram_bytes_[lane] += bytes;
      return true;
    }
    const uint64_t at = pacers_[lane].ready_at(now, bytes);
    if (paced_until_ == 0 || at < paced_until_) paced_until_ = at;
    counters_.paced.add();
    return false;
  }
  // What a frame of `frame_bytes` costs its link, as the pacer counts it:
  // Ethernet pads a frame to 60 bytes, and a wire adds pace_overhead_.
  uint32_t link_bytes(uint32_t frame_bytes) const { return std::max<uint32_t>(frame_bytes, 60) + pace_overhead_; }
  // room() for a run of n frames of the given sizes, in order: how many of
  // them may go (all charged). With the lane unpaced, the run is checked
  // and counted once instead of frame by frame.
  uint32_t room_for_run(uint16_t lane, const uint32_t* frame_bytes, uint32_t n, uint64_t now) {
    if (pacers_[lane].on()) {
      for (uint32_t i = 0; i < n; ++i)
        if (!room(lane, frame_bytes[i], now)) return i;
      return n;
    }
    n = std::min<uint32_t>(n, kCap - q_[lane].count);
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < n; ++i) bytes += link_bytes(frame_bytes[i]);
    sent_bytes_[lane] += bytes;
    return n;
  }
  // Frames `lane`'s batch still takes this turn (room() checks one frame
  // against the batch as it is: a run checks its length here first).
  uint32_t batch_room(uint16_t lane) const { return kCap - q_[lane].count; }
  // Bytes `lane`'s pacer let go since the last call (a rate controller
  // raises only a rate that is in use).
  uint64_t take_sent_bytes(uint16_t lane, uint64_t* datagram_bytes = nullptr) {
    const uint64_t n = sent_bytes_[lane];
    sent_bytes_[lane] = 0;
    if (datagram_bytes != nullptr) *datagram_bytes = datagram_bytes_[lane];
    datagram_bytes_[lane] = 0;
    return n;
  }
  // A frame for `lane`, after room() said yes.
  void push(uint16_t lane, rte_mbuf* m) { q_[lane].frames[q_[lane].count++] = m; }

  bool pending() const {
    for (uint16_t l = 0; l < lanes_; ++l)
      if (q_[l].count > 0) return true;
    return false;
  }
  // The earliest time a lane that refused a frame since new_turn() takes
  // one (0: none refused) - when the core must look again.
  uint64_t paced_until() const { return paced_until_; }
  void new_turn() { paced_until_ = 0; }

  // Hands each lane's batch to the port (sealing what is not sealed yet);
  // returns the frames it took.
  uint32_t flush(drivers::Port& port);
  // Frees what is still queued (a node going away).
  void drop_queued();

 private:
  struct Queue {
    rte_mbuf* frames[kCap];
    uint16_t count = 0;
    uint16_t sealed = 0;  // the first frames, sealed already (left by a full port)
  };
  void seal(Queue& q);
  uint64_t burst_for(uint64_t rate_bps) const {
    return fixed_burst_ ? fixed_burst_ : std::clamp<uint64_t>(rate_bps / 8 / 5000, min_burst_, max_burst_);
  }

  uint16_t lanes_;
  uint16_t link_bytes_;
  uint16_t sealed_link_ = 0;
  uint32_t pace_overhead_;
  Counters& counters_;
  auth::FrameAuth* auth_ = nullptr;
  uint64_t paced_until_ = 0;
  uint64_t sent_bytes_[kMaxLanes] = {};  // take_sent_bytes()
  uint64_t datagram_bytes_[kMaxLanes] = {};  // ... of them datagrams
  uint64_t fixed_burst_ = 0, min_burst_ = 0, max_burst_ = UINT64_MAX;
  Queue q_[kMaxLanes];
  Pacer pacers_[kMaxLanes];
};

}  // namespace lanecast::engine
