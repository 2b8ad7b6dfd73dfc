// A wake-up source for ports whose frames come from a kernel interface
// (DPDK's af_packet and af_xdp PMDs): DPDK 22.11 gives them no rx interrupt,
// and the PMD's own socket is private to it.
//
// We open a second packet socket on the same interface, bound to lanecast's
// EtherType, whose socket filter keeps the first byte of each frame and whose
// receive buffer holds only a few such bytes: an arrival makes the socket
// readable and wakes the core's ppoll(). Just before the core sleeps, arm()
// discards what the socket queued while the core was busy (one recvmmsg), so
// only arrivals from then on wake it; the frames themselves are read from the
// PMD's ring as usual. While the core is busy a frame costs the kernel one BPF
// instruction and, once the few bytes are queued, a counted drop - cheaper
// than switching the filter on and off around every sleep (two setsockopt
// calls and a drain per sleep, which members sharing CPUs pay at every frame
// gap: 9% of all CPU time in an 8-process pipeline on 2 CPUs).
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
  // Before sleeping: drops the wake-ups queued while busy, so that fd() turns
  // readable on the next arrival. False if the socket cannot be drained (then
  // the core must not sleep longer than its nap limit).
  bool arm();
  // After waking: nothing to undo (kept for the port interface's symmetry).
  void disarm() {}

 private:
  int fd_ = -1;
};

}  // namespace lanecast::drivers
