// Ethernet framing shared by every Ethernet port: lanecast frames are Ethernet
// II with the IEEE 802 local experimental EtherType 0x88B5.
#pragma once

#include <cstdint>
#include <cstring>

#include "drivers/port.h"

namespace lanecast::drivers::ethernet {

inline constexpr uint16_t kEtherType = 0x88B5;
inline constexpr uint16_t kHeaderBytes = 14;
inline constexpr uint16_t kWireOverheadBytes = 24;  // preamble 8 + FCS 4 + inter-frame gap 12

using Mac = uint8_t[6];

inline PeerAddress to_peer(const uint8_t mac[6]) {
  PeerAddress a;
  a.len = 6;
  std::memcpy(a.bytes, mac, 6);
  return a;
}

// A locally administered unicast MAC naming (node, lane): 02:4c:43:nn:nn:ll
// ("LC"); the fabric routes by it.
inline PeerAddress node_mac(uint32_t node, uint16_t lane) {
  const uint8_t m[6] = {0x02, 0x4c, 0x43, static_cast<uint8_t>(node >> 8),
                        static_cast<uint8_t>(node), static_cast<uint8_t>(lane)};
  return to_peer(m);
}

// The node a node_mac() names, or false for any other address.
inline bool node_of_mac(const uint8_t* mac, uint32_t* node) {
  if (mac[0] != 0x02 || mac[1] != 0x4c || mac[2] != 0x43) return false;
  *node = static_cast<uint32_t>(mac[3]) << 8 | mac[4];
  return true;
}

inline bool is_group(const uint8_t* mac) { return (mac[0] & 1) != 0; }

inline void write_header(uint8_t* at, const PeerAddress& dst, const PeerAddress& src) {
  std::memcpy(at, dst.bytes, 6);
  std::memcpy(at + 6, src.bytes, 6);
  at[12] = static_cast<uint8_t>(kEtherType >> 8);
  at[13] = static_cast<uint8_t>(kEtherType & 0xff);
}

// Addressed to `self` (or to a group address) and carrying our EtherType.
inline bool accepts(const uint8_t* hdr, const PeerAddress& self) {
  if (hdr[12] != (kEtherType >> 8) || hdr[13] != (kEtherType & 0xff)) return false;
  return is_group(hdr) || std::memcmp(hdr, self.bytes, 6) == 0;
}

}  // namespace lanecast::drivers::ethernet
