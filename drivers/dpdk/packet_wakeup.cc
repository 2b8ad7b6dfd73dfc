#include "drivers/dpdk/packet_wakeup.h"

#include <arpa/inet.h>
#include <linux/filter.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sys/socket.h>
#include <sys/uio.h>
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
    // A one-instruction classic BPF program: keep 1 byte of every frame.
    sock_filter code[1] = {{BPF_RET | BPF_K, 0, 0, 1u}};
    sock_fprog prog{1, code};
    if (setsockopt(fd_, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof prog) != 0) throw sys_error("attach filter");
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

bool PacketWakeup::arm() {
  // Bounded: the receive buffer holds a handful of one-byte frames, so one
  // call normally takes them all.
  constexpr unsigned kBatch = 16;
  char bytes[kBatch];
  iovec iov[kBatch];
  mmsghdr msgs[kBatch];
  for (unsigned i = 0; i < kBatch; ++i) {
    iov[i] = iovec{&bytes[i], 1};
    msgs[i] = mmsghdr{};
    msgs[i].msg_hdr.msg_iov = &iov[i];
    msgs[i].msg_hdr.msg_iovlen = 1;
  }
  for (int round = 0; round < 16; ++round) {
    const int n = recvmmsg(fd_, msgs, kBatch, MSG_DONTWAIT, nullptr);
    if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    if (static_cast<unsigned>(n) < kBatch) return true;
  }
  return true;
}

}  // namespace lanecast::drivers
