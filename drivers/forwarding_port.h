// A port that passes every call to another: the base of port decorators
// (faults, delay, multicast loss, tests' observers), which override only
// what they change. Written once, so a call the interface gains reaches the
// port beneath through every decorator - one that forgot it would hide it.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "drivers/port.h"

namespace lanecast::drivers {

class ForwardingPort : public Port {
 public:
  explicit ForwardingPort(Port& inner) : in_(inner) {}
  explicit ForwardingPort(std::unique_ptr<Port> inner) : owned_(std::move(inner)), in_(*owned_) {}

  uint16_t rx_burst(uint16_t lane, rte_mbuf** frames, uint16_t max) override { return in_.rx_burst(lane, frames, max); }
  uint16_t tx_burst(uint16_t lane, rte_mbuf** frames, uint16_t count) override {
    return in_.tx_burst(lane, frames, count);
  }
  uint16_t lanes() const override { return in_.lanes(); }
  uint32_t max_frame_bytes() const override { return in_.max_frame_bytes(); }
  PeerAddress address() const override { return in_.address(); }
  std::string name() const override { return in_.name(); }
  PortCaps caps() const override { return in_.caps(); }
  PortStats stats() const override { return in_.stats(); }
  uint16_t link_header_bytes() const override { return in_.link_header_bytes(); }
  void write_link_header(uint8_t* at, const PeerAddress& dst) const override { in_.write_link_header(at, dst); }
  bool accepts(const uint8_t* h) const override { return in_.accepts(h); }
  bool is_from(const uint8_t* h, const PeerAddress& p) const override { return in_.is_from(h, p); }
  uint64_t accepted(const uint8_t* const* h, uint16_t n) const override { return in_.accepted(h, n); }
  PeerAddress source_of(const uint8_t* h) const override { return in_.source_of(h); }
  uint16_t rx_link_header_bytes() const override { return in_.rx_link_header_bytes(); }
  uint16_t sealed_link_bytes() const override { return in_.sealed_link_bytes(); }
  std::string learn_peers(const PeerAddress* p, size_t n) override { return in_.learn_peers(p, n); }
  std::string register_pool(rte_mempool* pool) override { return in_.register_pool(pool); }
  PeerAddress group_address(const GroupAddressSeed& seed, uint16_t lane) const override { return in_.group_address(seed, lane); }
  std::string join_group(uint16_t lane, const PeerAddress& group) override { return in_.join_group(lane, group); }
  void leave_group(uint16_t lane, const PeerAddress& group) override { in_.leave_group(lane, group); }
  std::string join_hellos(uint32_t id, uint16_t lane, PeerAddress* to) override { return in_.join_hellos(id, lane, to); }
  void leave_hellos(uint32_t id, uint16_t lane) override { in_.leave_hellos(id, lane); }
  uint64_t held_until_ns() const override { return in_.held_until_ns(); }
  void attach_waker(Waker* w) override { in_.attach_waker(w); }
  void detach_waker() override { in_.detach_waker(); }
  void arm_wakeup() override { in_.arm_wakeup(); }
  void disarm_wakeup() override { in_.disarm_wakeup(); }

 protected:
  std::unique_ptr<Port> owned_;  // when the decorator owns the port beneath
  Port& in_;
};

}  // namespace lanecast::drivers
