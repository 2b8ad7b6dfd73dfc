#include "drivers/port.h"

namespace lanecast::drivers {

std::string format_address(const PeerAddress& a) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  for (uint8_t i = 0; i < a.len; ++i) {
    if (i) s += ':';
    s += kHex[a.bytes[i] >> 4];
    s += kHex[a.bytes[i] & 15];
  }
  return s.empty() ? "-" : s;
}

}  // namespace lanecast::drivers
