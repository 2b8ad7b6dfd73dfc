// A wake-up source for ports whose frames come from a kernel interface
// (DPDK's af_packet and af_xdp PMDs): DPDK 22.11 gives them no rx interrupt,
// and the PMD's own socket is private to it.
//
// We open a second packet socket on the same interface, bound to lanecast's
// EtherType, and switch its socket filter: while the core is busy the filter
// takes nothing (the kernel runs one BPF instruction per frame and copies
// nothing); just before the core sleeps it takes the first byte of each frame,
// so an arrival makes the socket readable and wakes the core's ppoll(). After
// waking, the filter takes nothing again and what it queued is discarded; the
// frames themselves are read from the PMD's ring as usual.
#pragma once

#include <cstdint>
#include <string>

namespace lanecast::drivers {

class PacketWakeup {
 public:
  // Opens the socket on `iface` for frames of `ethertype`; throws
  // std::runtime_error with the system's reason.
  PacketWakeup(const std::string& iface, uint16_t ethertype);
  ~PacketWakeup();
  PacketWakeup(const PacketWakeup&) = delete;
  PacketWakeup& operator=(const PacketWakeup&) = delete;

  int fd() const { return fd_; }
  // Before sleeping: arrivals make fd() readable. False if the kernel refused
  // (then the core must not sleep longer than its nap limit).
  bool arm();
  // After waking: arrivals cost nothing again; queued wake-ups are dropped.
  void disarm();

 private:
  bool set_filter(bool take);
  int fd_ = -1;
  bool armed_ = false;
};

}  // namespace lanecast::drivers
