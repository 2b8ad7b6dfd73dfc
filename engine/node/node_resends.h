// Resends and the deadlines that find them, the part of a node that owns
// them (node_resends.cc). Each channel with frames in flight has one
// retransmission deadline and one silence deadline, the running broadcast
// one more; the earliest is kept here (note_deadline), and a scan at that
// time queues what must be sent again and fails what went silent. Time the
// member was not looking - a stalled host, a core that slept past its time,
// receive queues not yet drained - is nobody's silence.
//
// It holds its node and reaches the node's parts (channels, lanes, the
// broadcast, the streams, frames) as a friend. Everything runs on the
// polling core; note_deadline is inline, as on the per-frame paths.
#pragma once

#include <cstdint>

#include "engine/node/channels.h"
#include "engine/reliable/send_channel.h"

struct rte_mbuf;

namespace lanecast::engine {

class Node;

class Resends {
 public:
  explicit Resends(Node& node) : node_(node) {}

  // A deadline at `at`: the next scan comes no later.
  void note_deadline(uint64_t at) {
    if (at < due_ns_) due_ns_ = at;
  }
  // When the next scan is due (UINT64_MAX: no deadline).
  uint64_t due_ns() const { return due_ns_; }
  // The timers' share of a receive turn, after its bursts were read;
  // `behind`: a lane gave a full burst, more frames wait.
  void after_rx(uint64_t now, bool behind);
  // The core napped: an arrival would have ended it, so the gap to the next
  // turn is not a stall.
  void napped() { last_rx_ns_ = 0; }
  // Frames to send again: holes the acks revealed, timeouts, abandoned
  // frames; first in each turn's transmit path.
  void pump(uint64_t now);

 private:
  using Channel = Channels::Channel;
  void scan(uint64_t now);
  void excuse_silence(uint64_t unseen_from, uint64_t now);
  rte_mbuf* build_abandoned(const Channel& c, uint32_t seq, const reliable::InFlight& e);

  Node& node_;
  uint64_t due_ns_ = UINT64_MAX;  // earliest timer of a channel or of the broadcast
  uint32_t timer_defers_ = 0;     // turns the due timers waited for a receive queue to drain
  uint64_t last_rx_ns_ = 0;       // the member's last receive turn (0: after a nap)
  uint32_t hold_turns_ = 0;       // turns the timers still wait after a stall
  uint64_t excused_to_ns_ = 0;    // silences already excused up to here (excuse_silence)
  static constexpr uint32_t kMaxTimerDefers = 64;  // turns: 64 full bursts read per lane
  static constexpr uint64_t kStallNs = 500'000;     // a gap between two turns that is a stall
};

}  // namespace lanecast::engine
