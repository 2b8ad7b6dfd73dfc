#include "drivers/dpdk/kernel_multicast.h"

#include <linux/if_packet.h>
#include <net/if.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace lanecast::drivers {
namespace {

packet_mreq request(int ifindex, const PeerAddress& mac) {
  packet_mreq r{};
  r.mr_ifindex = ifindex;
  r.mr_type = PACKET_MR_MULTICAST;
  r.mr_alen = mac.len;
  std::memcpy(r.mr_address, mac.bytes, mac.len < sizeof r.mr_address ? mac.len : sizeof r.mr_address);
  return r;
}

}  // namespace

KernelMulticast::KernelMulticast(const std::string& iface) : iface_(iface) {
  ifindex_ = static_cast<int>(if_nametoindex(iface.c_str()));
  if (ifindex_ == 0) throw std::runtime_error("multicast: interface " + iface + " not found");
  // Protocol 0: the socket is on no receive path, it only holds memberships.
  fd_ = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
  if (fd_ < 0)
    throw std::runtime_error("multicast: cannot open a packet socket for " + iface + ": " + std::strerror(errno));
}

KernelMulticast::~KernelMulticast() {
  if (fd_ >= 0) close(fd_);
}

std::string KernelMulticast::join(const PeerAddress& mac) {
  if (mac.len != 6) return iface_ + ": a multicast MAC has 6 bytes, not " + std::to_string(mac.len);
  const packet_mreq r = request(ifindex_, mac);
  if (setsockopt(fd_, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &r, sizeof r) != 0)
    return iface_ + ": cannot join " + format_address(mac) + ": " + std::strerror(errno);
  return "";
}

void KernelMulticast::leave(const PeerAddress& mac) {
  if (mac.len != 6) return;
  const packet_mreq r = request(ifindex_, mac);
  setsockopt(fd_, SOL_PACKET, PACKET_DROP_MEMBERSHIP, &r, sizeof r);  // not joined: nothing to undo
}

}  // namespace lanecast::drivers
