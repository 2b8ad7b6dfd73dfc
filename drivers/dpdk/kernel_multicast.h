// Multicast membership of a kernel interface, for the PMDs that sit on one
// (af_packet, af_xdp): the kernel's list of link-layer multicast addresses
// the interface receives (`ip maddr show dev IFACE`), which a NIC driver
// turns into its hardware filter.
//
// DPDK 22.11's af_packet and af_xdp PMDs have no multicast-list operation,
// and their own sockets are private to them, so the port opens one packet
// socket of its own on the interface and adds each group with
// PACKET_ADD_MEMBERSHIP (PACKET_MR_MULTICAST). The socket is bound to no
// protocol: it never receives a frame. The kernel ties the memberships to the
// socket: closing it - including the process dying by SIGKILL - removes them,
// so no address stays programmed after an exit of any kind (packet(7)).
#pragma once

#include <string>

#include "drivers/port.h"

namespace lanecast::drivers {

class KernelMulticast {
 public:
  // Throws std::runtime_error with the system's reason (no such interface,
  // no CAP_NET_RAW).
  explicit KernelMulticast(const std::string& iface);
  ~KernelMulticast();  // closes the socket: the kernel drops every membership
  KernelMulticast(const KernelMulticast&) = delete;
  KernelMulticast& operator=(const KernelMulticast&) = delete;

  // "" or the system's reason. The kernel counts joins of one address per
  // socket, so a join is undone by exactly one leave.
  std::string join(const PeerAddress& mac);
  void leave(const PeerAddress& mac);

 private:
  std::string iface_;
  int ifindex_ = 0;
  int fd_ = -1;
};

}  // namespace lanecast::drivers
