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

#include "drivers/port.h"

namespace lanecast::drivers {

class MulticastLossPort final : public Port {
 public:
  // Wraps `inner` (owned, or not: the fabric owns its ring ports). Throws
  // std::invalid_argument unless 0 <= loss < 1.
  MulticastLossPort(std::unique_ptr<Port> inner, double loss, uint64_t seed);
  MulticastLossPort(Port& inner, double loss, uint64_t seed);

  uint16_t rx_burst(uint16_t lane, rte_mbuf** frames, uint16_t max) override;
  uint16_t tx_burst(uint16_t lane, rte_mbuf** frames, uint16_t count) override {
    return in_.tx_burst(lane, frames, count);
  }
  uint16_t lanes() const override { return in_.lanes(); }
  uint32_t max_frame_bytes() const override { return in_.max_frame_bytes(); }
  PeerAddress address() const override { return in_.address(); }
  std::string name() const override { return in_.name(); }
  PortCaps caps() const override { return in_.caps(); }
  PortStats stats() const override {
    PortStats s = in_.stats();
    s.rx_lost_emulated += lost_;
    return s;
  }
  uint16_t link_header_bytes() const override { return in_.link_header_bytes(); }
  void write_link_header(uint8_t* at, const PeerAddress& dst) const override { in_.write_link_header(at, dst); }
  bool accepts(const uint8_t* h) const override { return in_.accepts(h); }
  uint16_t rx_link_header_bytes() const override { return in_.rx_link_header_bytes(); }
  uint16_t sealed_link_bytes() const override { return in_.sealed_link_bytes(); }
  std::string join_hellos(uint32_t id, uint16_t lane, PeerAddress* to) override { return in_.join_hellos(id, lane, to); }
  void leave_hellos(uint32_t id, uint16_t lane) override { in_.leave_hellos(id, lane); }
  std::string learn_peers(const PeerAddress* p, size_t n) override { return in_.learn_peers(p, n); }
  std::string register_pool(rte_mempool* pool) override { return in_.register_pool(pool); }
  bool is_from(const uint8_t* h, const PeerAddress& p) const override { return in_.is_from(h, p); }
  PeerAddress source_of(const uint8_t* h) const override { return in_.source_of(h); }
  PeerAddress group_address(const GroupKey& key, uint16_t lane) const override { return in_.group_address(key, lane); }
  std::string join_group(uint16_t lane, const PeerAddress& group) override { return in_.join_group(lane, group); }
  void leave_group(uint16_t lane, const PeerAddress& group) override { in_.leave_group(lane, group); }
  uint64_t held_until_ns() const override { return in_.held_until_ns(); }
  void attach_waker(Waker* w) override { in_.attach_waker(w); }
  void detach_waker() override { in_.detach_waker(); }
  void arm_wakeup() override { in_.arm_wakeup(); }
  void disarm_wakeup() override { in_.disarm_wakeup(); }

  uint64_t lost() const { return lost_; }  // the receiving core's count

 private:
  std::unique_ptr<Port> owned_;
  Port& in_;
  uint64_t threshold_;  // drop when the generator's draw is below it
  std::mt19937_64 rng_;
  uint64_t lost_ = 0;
};

}  // namespace lanecast::drivers
