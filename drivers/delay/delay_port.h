// A port that holds received frames back: the link latency of a wide-area
// path, emulated in the member itself. This machine's kernel has neither netem
// nor fq, so two "sites" on one switch (a testbed of namespaces on a Linux
// bridge) get their distance here: every frame from a peer of another site is
// delivered `delay` nanoseconds after it arrived (a group file's
// site_latency_us with emulate_latency; docs/groups.md).
//
// Delaying on receive covers every frame a peer sends - data, acks, hellos
// after the bootstrap - without touching the transmit path, and keeps each
// source's frames in order: all frames from one source wait the same time, so
// each delay value is one FIFO per lane and the port delivers the earliest
// head first. A FIFO that is full leaves further frames in the inner port's
// ring (the kernel or the NIC drops there, counted as usual): nothing is lost
// or reordered here.
//
// The engine must not sleep past a held frame's time: held_until_ns() tells
// when the next one is due, on the clock the port was given.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "drivers/port.h"

namespace lanecast::drivers {

struct DelayOptions {
  // Frames from these sources are held this long; frames from any other
  // source are delivered at once.
  std::vector<std::pair<PeerAddress, uint64_t>> delay_ns_of_source;
  // Frames held per lane and delay value (rounded up to a power of two); at
  // least the bandwidth-delay product in frames (2 ms at 10 Gbit/s in
  // 1500-byte frames: 1700).
  uint32_t queue_frames = 4096;
  // The clock arrival and delivery times are read on (monotonic, ns).
  uint64_t (*clock)() = nullptr;
};

class DelayPort final : public Port {
 public:
  // Throws std::invalid_argument without a clock, or with one source given twice.
  DelayPort(std::unique_ptr<Port> inner, const DelayOptions& o);
  ~DelayPort() override;  // frees the frames still held

  uint16_t rx_burst(uint16_t lane, rte_mbuf** frames, uint16_t max) override;
  uint16_t tx_burst(uint16_t lane, rte_mbuf** frames, uint16_t count) override {
    return in_->tx_burst(lane, frames, count);
  }
  uint16_t lanes() const override { return in_->lanes(); }
  uint32_t max_frame_bytes() const override { return in_->max_frame_bytes(); }
  PeerAddress address() const override { return in_->address(); }
  std::string name() const override { return in_->name() + " (delayed)"; }
  PortCaps caps() const override { return in_->caps(); }
  PortStats stats() const override { return in_->stats(); }
  uint16_t link_header_bytes() const override { return in_->link_header_bytes(); }
  void write_link_header(uint8_t* at, const PeerAddress& dst) const override { in_->write_link_header(at, dst); }
  bool accepts(const uint8_t* h) const override { return in_->accepts(h); }
  uint16_t rx_link_header_bytes() const override { return in_->rx_link_header_bytes(); }
  uint16_t sealed_link_bytes() const override { return in_->sealed_link_bytes(); }
  std::string join_hellos(uint32_t id, uint16_t lane, PeerAddress* to) override { return in_->join_hellos(id, lane, to); }
  void leave_hellos(uint32_t id, uint16_t lane) override { in_->leave_hellos(id, lane); }
  std::string learn_peers(const PeerAddress* p, size_t n) override { return in_->learn_peers(p, n); }
  std::string register_pool(rte_mempool* pool) override { return in_->register_pool(pool); }
  bool is_from(const uint8_t* h, const PeerAddress& p) const override { return in_->is_from(h, p); }
  PeerAddress source_of(const uint8_t* h) const override { return in_->source_of(h); }
  PeerAddress group_address(const GroupKey& key, uint16_t lane) const override { return in_->group_address(key, lane); }
  std::string join_group(uint16_t lane, const PeerAddress& group) override { return in_->join_group(lane, group); }
  void leave_group(uint16_t lane, const PeerAddress& group) override { in_->leave_group(lane, group); }
  void attach_waker(Waker* w) override { in_->attach_waker(w); }
  void detach_waker() override { in_->detach_waker(); }
  void arm_wakeup() override { in_->arm_wakeup(); }
  void disarm_wakeup() override { in_->disarm_wakeup(); }
  uint64_t held_until_ns() const override;

  uint64_t frames_held() const;  // now, all lanes

 private:
  struct Held {
    rte_mbuf* frame;
    uint64_t due_ns;
  };
  // One delay value's frames on one lane, oldest first.
  struct Fifo {
    uint64_t delay_ns = 0;
    std::vector<Held> ring;  // power-of-two size
    uint64_t head = 0, tail = 0;
    uint64_t size() const { return tail - head; }
    bool empty() const { return head == tail; }
    const Held& front() const { return ring[head & (ring.size() - 1)]; }
  };
  uint32_t class_of(const rte_mbuf* frame) const;
  void take_arrivals(uint16_t lane, uint64_t now);

  std::unique_ptr<Port> in_;
  uint64_t (*clock_)();
  // Sources sorted by address bytes, each with its delay class.
  std::vector<std::pair<PeerAddress, uint32_t>> sources_;
  uint32_t no_delay_class_ = 0;
  std::vector<std::vector<Fifo>> lanes_;  // [lane][class]
};

}  // namespace lanecast::drivers
