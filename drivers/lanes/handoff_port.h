// A lane driven by a core of its own: the port's frames handed between two
// cores through a pair of single-producer/single-consumer rings.
//
// A member's state belongs to one core (its polling core); a member with two
// lanes has two NICs, which may sit on different sockets, and each NIC's
// receive and transmit work (for af_packet: system calls, the kernel's copy,
// a transmit that blocks while the kernel's ring is full) is best done by a
// core near it. HandoffPort is what the member's core sees of such a lane: its
// rx_burst and tx_burst only move mbuf pointers through the rings. The lane's
// core runs lane_rx() and lane_tx() (engine/runtime/lane_io_task.h), which move
// frames between the rings and the real port, and wakes the member's core
// when frames came. No payload is copied: the mbufs change hands.
//
// Threads: the member side (rx_burst, tx_burst, the link framing and the
// other const calls) on the member's core; the lane side (lane_*) on the
// lane's core; stats() anywhere. attach_waker and attach_lane_waker on the
// control path while both cores are parked.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "drivers/port.h"

struct rte_ring;

namespace lanecast::drivers {

class HandoffPort final : public Port {
 public:
  static constexpr uint16_t kBurst = 32;

  // `inner`: a one-lane port. `ring_frames`: each ring's size (a power of
  // two). Throws std::runtime_error when DPDK cannot make the rings.
  HandoffPort(std::unique_ptr<Port> inner, const std::string& name, uint32_t ring_frames = 1024);
  ~HandoffPort() override;
  HandoffPort(const HandoffPort&) = delete;
  HandoffPort& operator=(const HandoffPort&) = delete;

  // Member side.
  uint16_t rx_burst(uint16_t lane, rte_mbuf** frames, uint16_t max) override;
  uint16_t tx_burst(uint16_t lane, rte_mbuf** frames, uint16_t count) override;
  uint16_t lanes() const override { return 1; }
  uint32_t max_frame_bytes() const override { return inner_->max_frame_bytes(); }
  PeerAddress address() const override { return inner_->address(); }
  std::string name() const override { return inner_->name(); }
  // Arrivals always wake the member's core: the lane's core says so.
  PortCaps caps() const override {
    PortCaps c = inner_->caps();
    c.rx_wakeup = true;
    return c;
  }
  // The inner port's, with the rings' refusals: a frame dropped because the
  // member's core left the receive ring full is rx_missed.
  PortStats stats() const override;
  uint16_t link_header_bytes() const override { return inner_->link_header_bytes(); }
  void write_link_header(uint8_t* at, const PeerAddress& dst) const override { inner_->write_link_header(at, dst); }
  bool accepts(const uint8_t* h) const override { return inner_->accepts(h); }
  uint16_t rx_link_header_bytes() const override { return inner_->rx_link_header_bytes(); }
  uint16_t sealed_link_bytes() const override { return inner_->sealed_link_bytes(); }
  std::string join_hellos(uint32_t id, uint16_t lane, PeerAddress* to) override { return inner_->join_hellos(id, lane, to); }
  void leave_hellos(uint32_t id, uint16_t lane) override { inner_->leave_hellos(id, lane); }
  std::string learn_peers(const PeerAddress* p, size_t n) override { return inner_->learn_peers(p, n); }
  std::string register_pool(rte_mempool* pool) override { return inner_->register_pool(pool); }
  bool is_from(const uint8_t* h, const PeerAddress& p) const override { return inner_->is_from(h, p); }
  uint64_t accepted(const uint8_t* const* h, uint16_t n) const override { return inner_->accepted(h, n); }
  PeerAddress source_of(const uint8_t* h) const override { return inner_->source_of(h); }
  // Membership is control path: the inner port's joins do not touch the
  // rings the lane core polls (a socket of its own, a NIC register, an atomic
  // filter slot).
  std::string join_group(uint16_t lane, const PeerAddress& group) override { return inner_->join_group(lane, group); }
  void leave_group(uint16_t lane, const PeerAddress& group) override { inner_->leave_group(lane, group); }
  PeerAddress group_address(const GroupAddressSeed& seed, uint16_t lane) const override {
    return inner_->group_address(seed, lane);
  }
  void attach_waker(Waker* w) override { member_waker_.store(w, std::memory_order_release); }
  void detach_waker() override { member_waker_.store(nullptr, std::memory_order_release); }

  // Lane side. Each returns the frames it moved.
  uint32_t lane_rx();
  uint32_t lane_tx();
  // When the lane's core must look again: now (0) while frames wait to be
  // sent, else when the inner port holds a frame until (UINT64_MAX: never).
  uint64_t lane_next_due_ns() const;
  // Before the lane's core sleeps: true when the inner port's arrivals will
  // wake it (tx_burst always does).
  bool lane_arm();
  void lane_disarm() { inner_->disarm_wakeup(); }
  // The lane's core's waker: the inner port's arrivals and the member's
  // transmissions wake it.
  void attach_lane_waker(Waker* w);
  void detach_lane_waker();

  uint64_t rx_ring_full() const { return rx_ring_full_.load(std::memory_order_relaxed); }
  uint64_t tx_ring_full() const { return tx_ring_full_.load(std::memory_order_relaxed); }

 private:
  std::unique_ptr<Port> inner_;
  rte_ring* rx_ring_ = nullptr;  // lane core -> member core
  rte_ring* tx_ring_ = nullptr;  // member core -> lane core
  std::atomic<Waker*> member_waker_{nullptr};
  std::atomic<Waker*> lane_waker_{nullptr};
  // Frames the inner port did not take yet, oldest first (lane side).
  rte_mbuf* unsent_[kBurst] = {};
  uint16_t unsent_head_ = 0, unsent_count_ = 0;
  std::atomic<uint64_t> rx_ring_full_{0}, tx_ring_full_{0};
};

}  // namespace lanecast::drivers
