// Who may feed the daemon's UDP feed (--udp-in-from). Every datagram the
// feed accepts is published on the member's stream - in a keyed group,
// sealed as this member's own - so the feed is a trust boundary: only the
// configured senders' datagrams pass, and the rest are dropped and counted
// by reason. UDP source addresses are not authenticated (anyone on a path
// to the socket can forge one); this bounds who can feed it by accident or
// from elsewhere, a firewall or a private segment the rest.
#pragma once

#include <netinet/in.h>

#include <cstdint>
#include <string>
#include <vector>

namespace lanecast::daemon {

struct UdpSender {
  uint32_t net = 0, mask = 0;  // host byte order; mask 0: any address
  uint16_t port = 0;           // 0: any port
};

// What the feed takes when --udp-in-from is not given: this host's own
// loopback senders only.
inline constexpr const char* kDefaultUdpSenders = "127.0.0.0/8";

// "ADDR[/BITS][:PORT],..." or "any"; throws std::invalid_argument naming
// `what` and the entry that does not parse.
std::vector<UdpSender> parse_udp_senders(const std::string& text, const std::string& what);

enum class SenderVerdict : uint8_t { Accept, Address, Port };
// Address: no entry covers the address; Port: some do, none with its port.
SenderVerdict judge_sender(const std::vector<UdpSender>& allowed, const sockaddr_in& from);

}  // namespace lanecast::daemon
