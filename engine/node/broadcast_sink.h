// The machine's view of the running broadcast (algos::Actions): its actions
// become owed sends and signals (through the node, BroadcastHost),
// multicasts, deliveries and a timer on the polling core's clock. Private
// to the broadcast's files; a friend of Broadcast, so each action is one
// call into its state.
#pragma once

#include "engine/node/broadcast.h"

namespace lanecast::engine {

class Broadcast::Sink final : public algos::Actions {
 public:
  Sink(Broadcast& b, uint64_t now) : b_(b), now_(now) {}

  void send(algos::Rank to, algos::SegmentIndex seg, algos::Lane lane) override {
    if (to >= b_.cfg_.nodes || to == b_.cfg_.rank || seg >= b_.op_.plan->segments() || lane >= b_.cfg_.lanes ||
        !b_.parts_.host.owe_segment(to, seg, lane))
      b_.internal_error_ = true;
  }

  // A datagram: one frame to the port's group address where the switch
  // copies, one per member otherwise; never acknowledged or sent again.
  void multicast(algos::SegmentIndex seg, algos::Lane lane) override {
    if (seg >= b_.op_.plan->segments() || lane >= b_.cfg_.lanes) {
      b_.internal_error_ = true;
      return;
    }
    // Sized for one multicast per segment, the most a machine may ask for
    // (algos/machine.h); a machine asking for more loses the extra, counted.
    if (!b_.multicasts_.push(seg, lane)) {
      b_.parts_.counters.tx_datagrams_dropped.add();
      return;
    }
    if (!b_.parts_.caps.multicast) b_.parts_.counters.tx_mcast_emulated.add();
  }

  // The bytes are in the application's buffer already (copied while their
  // CRC was checked, broadcast_rx.cc): delivering only makes them part of
  // the result.
  void deliver(algos::SegmentIndex seg) override {
    if (seg >= b_.op_.plan->segments() || !b_.store_.held(seg)) {
      b_.internal_error_ = true;
      return;
    }
    b_.parts_.counters.delivered_bytes.add(b_.op_.plan->segment(seg).length);
  }

  // Fires in the first poll() at or after now + after_ns. One timer per
  // machine (algos/machine.h): a second before the first fired is the
  // machine's error.
  void arm(uint64_t after_ns, uint32_t tag) override {
    if (b_.op_.timer_at_ns != kNoTimer) {
      b_.internal_error_ = true;
      return;
    }
    b_.op_.timer_at_ns = after_ns > UINT64_MAX - now_ ? UINT64_MAX - 1 : now_ + after_ns;
    b_.op_.timer_tag = tag;
  }

  // An owed header-only frame through the reliable channel (wire::kFlagSignal).
  void signal(algos::Rank to, uint32_t tag) override {
    if (to >= b_.cfg_.nodes || to == b_.cfg_.rank || !b_.parts_.host.owe_signal(to, tag)) b_.internal_error_ = true;
  }

 private:
  Broadcast& b_;
  uint64_t now_;  // the time of the event being handled
};

}  // namespace lanecast::engine
