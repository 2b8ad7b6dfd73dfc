// Rate control (NodeConfig::rate_control), the part that owns it: a
// controller per lane (reliable::RateControl) that hears what each ack of
// the lane's channels acknowledged and each retransmission timeout, and the
// lane's pacer (TxLanes) that follows the controller's rate. The rate
// counters (NodeCounters::rate_*) are its slice of the node's.
//
// Off (no controllers), on() is false and the node calls nothing else. The
// calls are per ack, per timeout or per full window, never per frame sent;
// nothing allocates after start().
#pragma once

#include <cstdint>
#include <vector>

#include "engine/node/node_counters.h"
#include "engine/node/tx_lanes.h"
#include "engine/reliable/rate_control.h"
#include "engine/reliable/send_channel.h"

namespace lanecast::engine {

class LaneRates {
 public:
  LaneRates(TxLanes& lanes, NodeCounters& counters) : lanes_(lanes), counters_(counters) {}

  // Rate control on: a controller per lane, every lane paced alike from
  // the start.
  void start(uint16_t lanes, const reliable::RateControl::Params& p);
  bool on() const { return !rates_.empty(); }

  // The lane's controller hears what an ack acknowledged, its RTT sample,
  // the queue its frame met on the way there, and any hole it revealed.
  void adapt(uint16_t lane, const reliable::SendChannel::AckResult& r, uint64_t now);
  // A retransmission deadline of the lane passed.
  void timed_out(uint16_t lane, uint64_t now);
  // Acks, not the pacer, hold the lane back.
  void window_full(uint16_t lane) { rates_[lane].on_window_full(); }

 private:
  void changed(uint16_t lane, uint64_t now);  // the pacer follows; counters_.rate_mbit

  std::vector<reliable::RateControl> rates_;
  TxLanes& lanes_;
  NodeCounters& counters_;
};

}  // namespace lanecast::engine
