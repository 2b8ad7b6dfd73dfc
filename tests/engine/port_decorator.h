// A Port that forwards every call to another: the base of the tests' port
// decorators, which watch what a node sends and receives or take a
// capability away, while the frames still go through the real fabric.
#pragma once

#include <string>

#include "drivers/port.h"

namespace lanecast::engine::test {

class PortDecorator : public drivers::Port {
 public:
  explicit PortDecorator(drivers::Port& inner) : in_(inner) {}

  uint16_t rx_burst(uint16_t lane, rte_mbuf** frames, uint16_t max) override { return in_.rx_burst(lane, frames, max); }
  uint16_t tx_burst(uint16_t lane, rte_mbuf** frames, uint16_t count) override {
    return in_.tx_burst(lane, frames, count);
  }
  uint16_t lanes() const override { return in_.lanes(); }
  uint32_t max_frame_bytes() const override { return in_.max_frame_bytes(); }
  drivers::PeerAddress address() const override { return in_.address(); }
  std::string name() const override { return "decorated " + in_.name(); }
  drivers::PortCaps caps() const override { return in_.caps(); }
  drivers::PortStats stats() const override { return in_.stats(); }
  uint16_t link_header_bytes() const override { return in_.link_header_bytes(); }
  void write_link_header(uint8_t* at, const drivers::PeerAddress& dst) const override {
    in_.write_link_header(at, dst);
  }
  bool accepts(const uint8_t* h) const override { return in_.accepts(h); }
  uint16_t rx_link_header_bytes() const override { return in_.rx_link_header_bytes(); }
  uint16_t sealed_link_bytes() const override { return in_.sealed_link_bytes(); }
  std::string join_hellos(uint32_t id, uint16_t lane, drivers::PeerAddress* to) override {
    return in_.join_hellos(id, lane, to);
  }
  void leave_hellos(uint32_t id, uint16_t lane) override { in_.leave_hellos(id, lane); }
  std::string learn_peers(const drivers::PeerAddress* p, size_t n) override { return in_.learn_peers(p, n); }
  std::string register_pool(rte_mempool* pool) override { return in_.register_pool(pool); }
  bool is_from(const uint8_t* h, const drivers::PeerAddress& p) const override { return in_.is_from(h, p); }
  drivers::PeerAddress source_of(const uint8_t* h) const override { return in_.source_of(h); }
  drivers::PeerAddress group_address(const drivers::GroupKey& key, uint16_t lane) const override {
    return in_.group_address(key, lane);
  }
  std::string join_group(uint16_t lane, const drivers::PeerAddress& group) override {
    return in_.join_group(lane, group);
  }
  void leave_group(uint16_t lane, const drivers::PeerAddress& group) override { in_.leave_group(lane, group); }
  uint64_t held_until_ns() const override { return in_.held_until_ns(); }

 protected:
  drivers::Port& in_;
};

}  // namespace lanecast::engine::test
