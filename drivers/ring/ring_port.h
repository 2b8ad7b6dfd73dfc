// A Port over DPDK rings without an ethdev: one receive and one transmit ring
// per lane. The member side of the in-process fabric: the member's core
// transmits into the tx rings and receives from the rx rings; the fabric's
// switch (another core) drains the tx rings and fills the rx rings.
//
// No ethdev means no per-process limit on members (Debian's DPDK allows 32
// ethdevs per process) and nothing between the node and the ring but an
// enqueue. Arrivals wake a sleeping core: the switch calls notify_rx() after
// filling an rx ring, and tx_burst() notifies the switch's core the same way.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "drivers/ethernet.h"
#include "drivers/group_filter.h"
#include "drivers/port.h"

struct rte_ring;

namespace lanecast::drivers {

class RingPort final : public Port {
 public:
  struct Options {
    uint16_t lanes = 1;
    uint32_t ring_size = 1024;        // per ring; a power of two
    uint32_t max_frame_bytes = 1514;  // link header included
    PeerAddress mac;                  // this port's address (6 bytes)
    std::string name;                 // unique per process: names the rings
    bool multicast = false;           // the switch behind it copies group frames
  };

  // Throws std::invalid_argument for bad options, std::runtime_error when DPDK
  // cannot create a ring; nothing is left behind on failure.
  explicit RingPort(const Options& o);
  // Frees every frame still in the rings, then the rings.
  ~RingPort() override;
  RingPort(const RingPort&) = delete;
  RingPort& operator=(const RingPort&) = delete;

  uint16_t rx_burst(uint16_t lane, rte_mbuf** frames, uint16_t max) override;
  uint16_t tx_burst(uint16_t lane, rte_mbuf** frames, uint16_t count) override;

  uint16_t lanes() const override { return static_cast<uint16_t>(lanes_.size()); }
  uint32_t max_frame_bytes() const override { return max_frame_; }
  PeerAddress address() const override { return mac_; }
  std::string name() const override { return name_; }
  PortCaps caps() const override;
  PortStats stats() const override;
  uint16_t link_header_bytes() const override;
  void write_link_header(uint8_t* at, const PeerAddress& dst) const override;
  bool accepts(const uint8_t* link_header) const override;
  bool is_from(const uint8_t* link_header, const PeerAddress& peer) const override;
  uint64_t accepted(const uint8_t* const* link_headers, uint16_t n) const override {
    return groups_.accepts_each(link_headers, n, mac_);
  }
  PeerAddress source_of(const uint8_t* link_header) const override { return ethernet::source_of(link_header); }
  PeerAddress group_address(const GroupAddressSeed& seed, uint16_t lane) const override;
  std::string join_group(uint16_t lane, const PeerAddress& group) override;
  void leave_group(uint16_t lane, const PeerAddress& group) override;
  void attach_waker(Waker* w) override { rx_waker_ = w; }
  void detach_waker() override { rx_waker_ = nullptr; }

  // The switch's side (one core).
  rte_ring* tx_ring(uint16_t lane) const { return lanes_[lane].tx; }
  rte_ring* rx_ring(uint16_t lane) const { return lanes_[lane].rx; }
  // After filling rx rings: wakes the member's core if it sleeps.
  void notify_rx();
  // The core that drains the tx rings (the switch's), woken by tx_burst().
  void set_tx_waker(Waker* w) { tx_waker_ = w; }
  // Whether frames to the group MAC `mac` are copied to this port (the
  // switch's core; the fabric copies a group frame only to ports that joined).
  bool joined(const uint8_t* mac) const { return ethernet::is_broadcast(mac) || groups_.contains(mac); }

 private:
  struct Lane {
    rte_ring* rx = nullptr;  // switch -> member (SP: switch, SC: member)
    rte_ring* tx = nullptr;  // member -> switch (SP: member, SC: switch)
  };
  // Written by the member's core only, read by anyone (relaxed).
  class Count {
   public:
    void add(uint64_t n) { v_.store(v_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed); }
    uint64_t get() const { return v_.load(std::memory_order_relaxed); }

   private:
    std::atomic<uint64_t> v_{0};
  };
  void release();

  std::vector<Lane> lanes_;
  uint32_t max_frame_;
  PeerAddress mac_;
  std::string name_;
  bool multicast_;
  GroupFilter groups_;
  Waker* rx_waker_ = nullptr;
  Waker* tx_waker_ = nullptr;
  Count rx_frames_, tx_frames_, tx_full_;
};

}  // namespace lanecast::drivers
