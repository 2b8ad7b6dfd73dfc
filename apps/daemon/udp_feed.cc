#include "apps/daemon/udp_feed.h"

#include <arpa/inet.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace lanecast::daemon {

bool UdpEndpoint::multicast() const { return IN_MULTICAST(ntohl(addr.s_addr)); }

UdpEndpoint parse_udp_endpoint(const std::string& text, const std::string& what) {
  UdpEndpoint e;
  std::string rest = text;
  const size_t at = rest.find('@');
  if (at != std::string::npos) {
    if (inet_pton(AF_INET, rest.substr(at + 1).c_str(), &e.iface) != 1)
      throw std::invalid_argument(what + ": '" + rest.substr(at + 1) + "' is not an IPv4 interface address");
    rest = rest.substr(0, at);
  }
  const size_t colon = rest.rfind(':');
  if (colon == std::string::npos) throw std::invalid_argument(what + ": '" + text + "' is not ADDR:PORT[@IFACE_ADDR]");
  if (inet_pton(AF_INET, rest.substr(0, colon).c_str(), &e.addr) != 1)
    throw std::invalid_argument(what + ": '" + rest.substr(0, colon) + "' is not an IPv4 address");
  char* end = nullptr;
  const unsigned long port = std::strtoul(rest.c_str() + colon + 1, &end, 10);
  if (end == rest.c_str() + colon + 1 || *end != '\0' || port == 0 || port > 65535)
    throw std::invalid_argument(what + ": port '" + rest.substr(colon + 1) + "' is not 1..65535");
  e.port = static_cast<uint16_t>(port);
  return e;
}

namespace {

std::runtime_error sys_error(const std::string& what) { return std::runtime_error(what + ": " + std::strerror(errno)); }

}  // namespace

UdpSource::UdpSource(const UdpEndpoint& e, uint64_t max_message, std::vector<UdpSender> senders)
    : max_message_(std::min<uint64_t>(max_message, 65535)), senders_(std::move(senders)) {
  fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw sys_error("udp source: socket");
  const int one = 1;
  ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  ::setsockopt(fd_, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof one);
  const int rcvbuf = 8 << 20;
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(e.port);
  a.sin_addr = e.addr;  // a group: only its datagrams; unicast: the local address to listen on
  if (::bind(fd_, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) {
    const auto err = sys_error("udp source: bind " + std::string(inet_ntoa(e.addr)) + ":" + std::to_string(e.port));
    ::close(fd_);
    throw err;
  }
  if (e.multicast()) {
    ip_mreq m{};
    m.imr_multiaddr = e.addr;
    m.imr_interface = e.iface;
    if (::setsockopt(fd_, IPPROTO_IP, IP_ADD_MEMBERSHIP, &m, sizeof m) != 0) {
      const auto err = sys_error("udp source: join " + std::string(inet_ntoa(e.addr)));
      ::close(fd_);
      throw err;
    }
  }
  // One buffer more than the largest datagram, to see truncation.
  const size_t each = max_message_ + 1;
  bufs_.resize(each * kBatch);
  for (unsigned i = 0; i < kBatch; ++i) {
    iov_[i] = iovec{bufs_.data() + each * i, each};
    msgs_[i].msg_hdr.msg_iov = &iov_[i];
    msgs_[i].msg_hdr.msg_iovlen = 1;
  }
}

UdpSource::~UdpSource() {
  if (fd_ >= 0) ::close(fd_);
}

uint32_t UdpSource::drain(Publisher& pub, uint32_t budget) {
  uint32_t done = 0;
  while (done < budget) {
    if (next_ == have_) {
      for (unsigned i = 0; i < kBatch; ++i) {
        msgs_[i].msg_hdr.msg_control = ctrl_[i].data();
        msgs_[i].msg_hdr.msg_controllen = ctrl_[i].size();
        msgs_[i].msg_hdr.msg_flags = 0;
        msgs_[i].msg_hdr.msg_name = &from_[i];
        msgs_[i].msg_hdr.msg_namelen = sizeof from_[i];
      }
      const int n = ::recvmmsg(fd_, msgs_.data(), kBatch, MSG_DONTWAIT, nullptr);
      if (n <= 0) {
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) ++c_.errors;
        return done;
      }
      have_ = static_cast<unsigned>(n);
      next_ = 0;
      for (unsigned i = 0; i < have_; ++i)
        for (cmsghdr* cm = CMSG_FIRSTHDR(&msgs_[i].msg_hdr); cm != nullptr; cm = CMSG_NXTHDR(&msgs_[i].msg_hdr, cm))
          if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SO_RXQ_OVFL) {
            uint32_t ovfl;
            std::memcpy(&ovfl, CMSG_DATA(cm), sizeof ovfl);
            if (ovfl > last_ovfl_) c_.kernel_drops += ovfl - last_ovfl_;
            last_ovfl_ = ovfl;
          }
    }
    const mmsghdr& m = msgs_[next_];
    // Judged before anything else: a stranger's datagram is counted as his,
    // whatever its size.
    const SenderVerdict who = m.msg_hdr.msg_namelen == sizeof(sockaddr_in) ? judge_sender(senders_, from_[next_])
                                                                            : SenderVerdict::Address;
    if (who != SenderVerdict::Accept) {
      ++(who == SenderVerdict::Port ? c_.refused_port : c_.refused_address);
      ++next_;
      continue;
    }
    if ((m.msg_hdr.msg_flags & MSG_TRUNC) || m.msg_len > max_message_) {
      ++c_.truncated;
      ++next_;
      continue;
    }
    const PublishResult r = pub.publish(std::span(static_cast<const std::byte*>(iov_[next_].iov_base), m.msg_len));
    if (r == PublishResult::WouldBlock) return done;
    ++next_;
    ++done;
    if (r != PublishResult::Ok) {
      ++c_.errors;
      continue;
    }
    ++c_.datagrams;
    c_.bytes += m.msg_len;
  }
  return done;
}

UdpSink::UdpSink(const UdpEndpoint& e, int ttl) {
  fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw sys_error("udp sink: socket");
  if (e.multicast()) {
    const unsigned char t = static_cast<unsigned char>(ttl);
    ::setsockopt(fd_, IPPROTO_IP, IP_MULTICAST_TTL, &t, sizeof t);
    const unsigned char loop = 1;  // applications on this host are the point
    ::setsockopt(fd_, IPPROTO_IP, IP_MULTICAST_LOOP, &loop, sizeof loop);
    if (e.iface.s_addr != INADDR_ANY &&
        ::setsockopt(fd_, IPPROTO_IP, IP_MULTICAST_IF, &e.iface, sizeof e.iface) != 0) {
      const auto err = sys_error("udp sink: interface " + std::string(inet_ntoa(e.iface)));
      ::close(fd_);
      throw err;
    }
  }
  to_.sin_family = AF_INET;
  to_.sin_port = htons(e.port);
  to_.sin_addr = e.addr;
}

UdpSink::~UdpSink() {
  if (fd_ >= 0) ::close(fd_);
}

void UdpSink::send(const StreamMessage& m) {
  if (m.data.size() > 65507) {
    ++c_.truncated;
    return;
  }
  if (::sendto(fd_, m.data.data(), m.data.size(), MSG_DONTWAIT, reinterpret_cast<const sockaddr*>(&to_), sizeof to_) < 0) {
    ++c_.errors;  // a full socket buffer included: a datagram sink is as lossy as UDP
    return;
  }
  ++c_.datagrams;
  c_.bytes += m.data.size();
}

}  // namespace lanecast::daemon
