// The daemon's feeds besides local applications: a UDP socket (unicast or a
// multicast group) whose datagrams it publishes on its stream - a kernel
// feed made reliable across the group - and a sink that sends every message
// the member delivers as one datagram to a local UDP (multicast) address.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "apps/daemon/udp_senders.h"
#include "lanecast/lanecast.h"

namespace lanecast::daemon {

struct UdpEndpoint {
  in_addr addr{};    // unicast, or a multicast group
  uint16_t port = 0;
  in_addr iface{};   // the interface's address (multicast); INADDR_ANY: the default
  bool multicast() const;
};
// "ADDR:PORT" or "ADDR:PORT@IFACE_ADDR"; throws std::invalid_argument naming `what`.
UdpEndpoint parse_udp_endpoint(const std::string& text, const std::string& what);

struct UdpCounters {
  uint64_t datagrams = 0, bytes = 0;
  uint64_t truncated = 0;      // larger than the stream takes: dropped
  uint64_t kernel_drops = 0;   // the socket's buffer overflowed (SO_RXQ_OVFL)
  uint64_t errors = 0;
  uint64_t refused_address = 0;  // the feed's: a sender --udp-in-from does not name
  uint64_t refused_port = 0;     // ... whose address it names, from another port
};

class UdpSource {
 public:
  // Takes datagrams only from `senders` (udp_senders.h).
  UdpSource(const UdpEndpoint& e, uint64_t max_message, std::vector<UdpSender> senders);
  ~UdpSource();
  UdpSource(const UdpSource&) = delete;
  UdpSource& operator=(const UdpSource&) = delete;
  // Publishes what arrived, up to `budget` datagrams; one the stream cannot
  // take yet stays for the next call.
  uint32_t drain(Publisher& pub, uint32_t budget);
  const UdpCounters& counters() const { return c_; }
  int fd() const { return fd_; }

 private:
  static constexpr unsigned kBatch = 32;
  int fd_ = -1;
  uint64_t max_message_;
  std::vector<std::byte> bufs_;
  std::array<mmsghdr, kBatch> msgs_{};
  std::array<iovec, kBatch> iov_{};
  std::array<sockaddr_in, kBatch> from_{};
  std::vector<UdpSender> senders_;
  std::array<std::array<char, 64>, kBatch> ctrl_{};
  unsigned have_ = 0, next_ = 0;  // datagrams read, and the next to publish
  uint32_t last_ovfl_ = 0;
  UdpCounters c_;
};

class UdpSink {
 public:
  UdpSink(const UdpEndpoint& e, int ttl);
  ~UdpSink();
  UdpSink(const UdpSink&) = delete;
  UdpSink& operator=(const UdpSink&) = delete;
  void send(const StreamMessage& m);
  const UdpCounters& counters() const { return c_; }

 private:
  int fd_ = -1;
  sockaddr_in to_{};
  UdpCounters c_;
};

}  // namespace lanecast::daemon
