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

#include "drivers/forwarding_port.h"

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

class DelayPort final : public ForwardingPort {
 public:
  // Throws std::invalid_argument without a clock, or with one source given twice.
  DelayPort(std::unique_ptr<Port> inner, const DelayOptions& o);
  ~DelayPort() override;  // frees the frames still held

  uint16_t rx_burst(uint16_t lane, rte_mbuf** frames, uint16_t max) override;
  std::string name() const override { return in_.name() + " (delayed)"; }
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
  uint64_t take_arrivals(uint16_t lane);

  uint64_t (*clock_)();
  // Sources sorted by address bytes, each with its delay class.
  std::vector<std::pair<PeerAddress, uint32_t>> sources_;
  uint32_t no_delay_class_ = 0;
  std::vector<std::vector<Fifo>> lanes_;  // [lane][class]
};

}  // namespace lanecast::drivers
