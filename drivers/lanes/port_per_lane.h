// One port per lane: a member with two NICs (two switches) is one Port whose
// lane k is NIC k. Every NIC of a member carries the same link address (on
// separate switches there is no clash), so a peer has one address for all its
// lanes and the engine writes one link header whatever the lane.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "drivers/port.h"

namespace lanecast::drivers {

class PortPerLane final : public Port {
 public:
  // Throws std::invalid_argument unless the ports share one address and
  // carry one lane each.
  explicit PortPerLane(std::vector<std::unique_ptr<Port>> lanes);

  uint16_t rx_burst(uint16_t lane, rte_mbuf** frames, uint16_t max) override {
    return lanes_[lane]->rx_burst(0, frames, max);
  }
  uint16_t tx_burst(uint16_t lane, rte_mbuf** frames, uint16_t count) override {
    return lanes_[lane]->tx_burst(0, frames, count);
  }
  uint16_t lanes() const override { return static_cast<uint16_t>(lanes_.size()); }
  uint32_t max_frame_bytes() const override { return max_frame_; }
  PeerAddress address() const override { return lanes_[0]->address(); }
  std::string name() const override { return name_; }
  PortCaps caps() const override { return caps_; }
  PortStats stats() const override;
  uint16_t link_header_bytes() const override { return lanes_[0]->link_header_bytes(); }
  void write_link_header(uint8_t* at, const PeerAddress& dst) const override {
    lanes_[0]->write_link_header(at, dst);
  }
  uint16_t rx_link_header_bytes() const override { return lanes_[0]->rx_link_header_bytes(); }
  uint16_t sealed_link_bytes() const override { return lanes_[0]->sealed_link_bytes(); }
  std::string join_hellos(uint32_t id, uint16_t lane, PeerAddress* to) override {
    return lanes_.at(lane)->join_hellos(id, 0, to);
  }
  void leave_hellos(uint32_t id, uint16_t lane) override { lanes_.at(lane)->leave_hellos(id, 0); }
  std::string learn_peers(const PeerAddress* p, size_t n) override {
    for (auto& l : lanes_)
      if (std::string why = l->learn_peers(p, n); !why.empty()) return why;
    return "";
  }
  std::string register_pool(rte_mempool* pool) override {
    for (auto& l : lanes_)
      if (std::string why = l->register_pool(pool); !why.empty()) return why;
    return "";
  }
  // A group frame arrives on the lane whose port joined its address.
  bool accepts(const uint8_t* h) const override {
    for (const auto& p : lanes_)
      if (p->accepts(h)) return true;
    return false;
  }
  PeerAddress group_address(const GroupAddressSeed& seed, uint16_t lane) const override {
    return lanes_[0]->group_address(seed, lane);
  }
  std::string join_group(uint16_t lane, const PeerAddress& group) override {
    return lanes_.at(lane)->join_group(0, group);
  }
  void leave_group(uint16_t lane, const PeerAddress& group) override { lanes_.at(lane)->leave_group(0, group); }
  bool is_from(const uint8_t* h, const PeerAddress& p) const override { return lanes_[0]->is_from(h, p); }
  PeerAddress source_of(const uint8_t* h) const override { return lanes_[0]->source_of(h); }
  uint64_t held_until_ns() const override {
    uint64_t at = UINT64_MAX;
    for (const auto& p : lanes_) at = std::min(at, p->held_until_ns());
    return at;
  }
  void attach_waker(Waker* w) override {
    for (auto& p : lanes_) p->attach_waker(w);
  }
  void detach_waker() override {
    for (auto& p : lanes_) p->detach_waker();
  }
  void arm_wakeup() override {
    for (auto& p : lanes_) p->arm_wakeup();
  }
  void disarm_wakeup() override {
    for (auto& p : lanes_) p->disarm_wakeup();
  }

 private:
  std::vector<std::unique_ptr<Port>> lanes_;
  uint32_t max_frame_ = 0;
  std::string name_;
  PortCaps caps_;
};

}  // namespace lanecast::drivers
