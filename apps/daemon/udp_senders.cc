#include "apps/daemon/udp_senders.h"

#include <arpa/inet.h>

#include <cstdlib>
#include <stdexcept>

namespace lanecast::daemon {
namespace {

unsigned long number(const std::string& text, unsigned long max, const std::string& what, const std::string& entry) {
  char* end = nullptr;
  const unsigned long n = std::strtoul(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || n > max)
    throw std::invalid_argument(what + ": '" + entry + "' is not ADDR[/BITS][:PORT] (or any)");
  return n;
}

UdpSender parse_one(const std::string& entry, const std::string& what) {
  UdpSender s;
  std::string rest = entry;
  if (const size_t colon = rest.find(':'); colon != std::string::npos) {
    s.port = static_cast<uint16_t>(number(rest.substr(colon + 1), 65535, what, entry));
    if (s.port == 0) throw std::invalid_argument(what + ": '" + entry + "': a port is 1..65535 (leave it out: any)");
    rest = rest.substr(0, colon);
  }
  unsigned long bits = 32;
  if (const size_t slash = rest.find('/'); slash != std::string::npos) {
    bits = number(rest.substr(slash + 1), 32, what, entry);
    rest = rest.substr(0, slash);
  }
  in_addr a{};
  if (inet_pton(AF_INET, rest.c_str(), &a) != 1)
    throw std::invalid_argument(what + ": '" + rest + "' is not an IPv4 address");
  s.mask = bits == 0 ? 0 : ~uint32_t{0} << (32 - bits);
  s.net = ntohl(a.s_addr) & s.mask;
  return s;
}

}  // namespace

std::vector<UdpSender> parse_udp_senders(const std::string& text, const std::string& what) {
  if (text == "any") return {UdpSender{}};
  std::vector<UdpSender> out;
  for (size_t at = 0; at <= text.size();) {
    const size_t comma = text.find(',', at);
    const std::string entry = text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    out.push_back(parse_one(entry, what));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return out;
}

SenderVerdict judge_sender(const std::vector<UdpSender>& allowed, const sockaddr_in& from) {
  const uint32_t addr = ntohl(from.sin_addr.s_addr);
  const uint16_t port = ntohs(from.sin_port);
  bool address_known = false;
  for (const UdpSender& s : allowed) {
    if ((addr & s.mask) != s.net) continue;
    if (s.port == 0 || s.port == port) return SenderVerdict::Accept;
    address_known = true;
  }
  return address_known ? SenderVerdict::Port : SenderVerdict::Address;
}

}  // namespace lanecast::daemon
