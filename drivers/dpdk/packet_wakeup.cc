#include "drivers/dpdk/packet_wakeup.h"

#include <arpa/inet.h>
#include <linux/filter.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace lanecast::drivers {
namespace {

std::runtime_error sys_error(const std::string& what) {
  return std::runtime_error("wake-up socket: " + what + ": " + std::strerror(errno));
}

}  // namespace

PacketWakeup::PacketWakeup(const std::string& iface, uint16_t ethertype) {
  const unsigned index = if_nametoindex(iface.c_str());
  if (index == 0) throw sys_error("interface " + iface);
  fd_ = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, htons(ethertype));
  if (fd_ < 0) throw sys_error("socket on " + iface);
  try {
    // The filter first, so the socket never queues a frame before it is armed.
    if (!set_filter(false)) throw sys_error("attach filter");
    // A bound protocol (not ETH_P_ALL) receives incoming frames only: our
    // own transmissions never wake us.
    sockaddr_ll sa{};
    sa.sll_family = AF_PACKET;
    sa.sll_protocol = htons(ethertype);
    sa.sll_ifindex = static_cast<int>(index);
    if (bind(fd_, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0) throw sys_error("bind to " + iface);
    // A few wake-ups are all it ever needs to hold.
    const int rcvbuf = 4096;
    setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  } catch (...) {
    close(fd_);
    throw;
  }
}

PacketWakeup::~PacketWakeup() {
  if (fd_ >= 0) close(fd_);
}

bool PacketWakeup::set_filter(bool take) {
  // A one-instruction classic BPF program: return the number of bytes to
  // keep, 0 (drop) or 1.
  sock_filter code[1] = {{BPF_RET | BPF_K, 0, 0, take ? 1u : 0u}};
  sock_fprog prog{1, code};
  return setsockopt(fd_, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof prog) == 0;
}

bool PacketWakeup::arm() {
  if (!armed_) armed_ = set_filter(true);
  return armed_;
}

void PacketWakeup::disarm() {
  if (!armed_) return;
  // On failure the filter keeps taking one byte per frame: harmless, and the
  // next disarm() tries again.
  if (set_filter(false)) armed_ = false;
  char byte;
  // Bounded: the receive buffer holds a handful of one-byte frames.
  for (int i = 0; i < 256 && recv(fd_, &byte, 1, MSG_DONTWAIT) >= 0; ++i) {
  }
}

}  // namespace lanecast::drivers
