// A port that loses a share of the multicast frames it receives: the lossy
// first stage of a two-stage broadcast (unreliable multicast, then a reliable
// repair; Hoefler, Siebert & Rehm), reproduced on networks that lose nothing.
// This machine's kernel has no netem, and a switch drops by queue, not by a
// chosen rate; so the receiver drops, per frame, with probability `loss`
// drawn from a seeded generator (one per port: runs repeat). Only frames to a
// group address other than the broadcast address are dropped - the repair
// traffic and acks, all unicast, pass - and each drop is counted
// (PortStats::rx_lost_emulated).
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>

#include "drivers/forwarding_port.h"

namespace lanecast::drivers {

class MulticastLossPort final : public ForwardingPort {
 public:
  // Wraps `inner` (owned, or not: the fabric owns its ring ports). Throws
  // std::invalid_argument unless 0 <= loss < 1.
  MulticastLossPort(std::unique_ptr<Port> inner, double loss, uint64_t seed);
  MulticastLossPort(Port& inner, double loss, uint64_t seed);

  uint16_t rx_burst(uint16_t lane, rte_mbuf** frames, uint16_t max) override;
  PortStats stats() const override {
    PortStats s = in_.stats();
    s.rx_lost_emulated += lost_;
    return s;
  }

  uint64_t lost() const { return lost_; }  // the receiving core's count

 private:
  uint64_t threshold_;  // drop when the generator's draw is below it
  std::mt19937_64 rng_;
  uint64_t lost_ = 0;
};

}  // namespace lanecast::drivers
