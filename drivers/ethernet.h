// Ethernet framing shared by every Ethernet port: lanecast frames are Ethernet
// II with the IEEE 802 local experimental EtherType 0x88B5 (802 local
// experimental 1), addressed by MAC.
#pragma once

#include <rte_ether.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

#include "drivers/port.h"

namespace lanecast::drivers::ethernet {

inline constexpr uint16_t kEtherType = 0x88B5;
inline constexpr uint16_t kHeaderBytes = 14;        // dst 6 + src 6 + EtherType 2
inline constexpr uint16_t kWireOverheadBytes = 24;  // preamble 8 + FCS 4 + inter-frame gap 12
inline constexpr uint16_t kMinFrameBytes = 60;      // without FCS; shorter frames are padded

// --- MAC <-> PeerAddress ---------------------------------------------------

inline PeerAddress to_peer(const uint8_t mac[6]) {
  PeerAddress a;
  a.len = 6;
  std::memcpy(a.bytes, mac, 6);
  return a;
}
inline PeerAddress to_peer(const rte_ether_addr& mac) { return to_peer(mac.addr_bytes); }

// The MAC a PeerAddress holds; false (and `out` untouched) unless it is 6 bytes.
inline bool to_ether(const PeerAddress& a, rte_ether_addr* out) {
  if (a.len != RTE_ETHER_ADDR_LEN) return false;
  std::memcpy(out->addr_bytes, a.bytes, RTE_ETHER_ADDR_LEN);
  return true;
}

// "02:00:00:00:00:01" -> its address; nullopt unless exactly six pairs of hex
// digits joined by ':'.
inline std::optional<PeerAddress> parse_mac(std::string_view text) {
  if (text.size() != 17) return std::nullopt;
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  uint8_t mac[6];
  for (size_t i = 0; i < 6; ++i) {
    const int hi = hex(text[3 * i]), lo = hex(text[3 * i + 1]);
    if (hi < 0 || lo < 0 || (i < 5 && text[3 * i + 2] != ':')) return std::nullopt;
    mac[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return to_peer(mac);
}

inline constexpr uint8_t kBroadcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
inline PeerAddress broadcast() { return to_peer(kBroadcast); }

// Group (multicast or broadcast) addresses have the I/G bit set.
inline bool is_group(const uint8_t* mac) { return (mac[0] & 1) != 0; }
inline bool is_broadcast(const uint8_t* mac) { return std::memcmp(mac, kBroadcast, 6) == 0; }

// --- lanecast's own MACs ---------------------------------------------------
//
// A locally administered unicast MAC naming (node, lane): 02:4c:43:nn:nn:ll
// ("LC", node big-endian in two bytes, lane in one). A port of the in-process
// fabric carries node_mac(node, 0); ports that are separate NICs per lane may
// use one MAC per lane.

inline constexpr uint32_t kMaxNodes = 65536;
inline constexpr uint32_t kMaxLanes = 256;

inline PeerAddress node_mac(uint32_t node, uint16_t lane) {
  const uint8_t m[6] = {0x02, 0x4c, 0x43, static_cast<uint8_t>(node >> 8),
                        static_cast<uint8_t>(node), static_cast<uint8_t>(lane)};
  return to_peer(m);
}

inline bool is_node_mac(const uint8_t* mac) {
  return mac[0] == 0x02 && mac[1] == 0x4c && mac[2] == 0x43;
}

// The node a node_mac() names, or false for any other address.
inline bool node_of_mac(const uint8_t* mac, uint32_t* node) {
  if (!is_node_mac(mac)) return false;
  *node = static_cast<uint32_t>(mac[3]) << 8 | mac[4];
  return true;
}

// The lane a node_mac() names, or false for any other address.
inline bool lane_of_mac(const uint8_t* mac, uint16_t* lane) {
  if (!is_node_mac(mac)) return false;
  *lane = mac[5];
  return true;
}

// --- link header -----------------------------------------------------------

inline void write_header(uint8_t* at, const PeerAddress& dst, const PeerAddress& src) {
  std::memcpy(at, dst.bytes, 6);
  std::memcpy(at + 6, src.bytes, 6);
  at[12] = static_cast<uint8_t>(kEtherType >> 8);
  at[13] = static_cast<uint8_t>(kEtherType & 0xff);
}

inline bool is_lanecast(const uint8_t* hdr) {
  return hdr[12] == (kEtherType >> 8) && hdr[13] == (kEtherType & 0xff);
}

// Whether the frame's source MAC is `peer`'s.
inline bool is_from(const uint8_t* hdr, const PeerAddress& peer) {
  return peer.len == 6 && std::memcmp(hdr + 6, peer.bytes, 6) == 0;
}

// The frame's source MAC.
inline PeerAddress source_of(const uint8_t* hdr) { return to_peer(hdr + 6); }

// --- group addresses ---------------------------------------------------------
//
// A group's multicast MAC per lane, from its random seed (port.h's GroupAddressSeed):
// the seed's first six bytes with the I/G and U/L bits set (a locally
// administered group address: never IPv4's 01:00:5e, whose U/L bit is clear;
// a first byte of 0x33, IPv6's, is moved to 0x37), the lane added to the
// last byte so a group's lanes differ. 46 random bits: two groups on one
// segment collide by accident once in 7e13 pairs; the engine checks the groups it holds itself (engine/group/address_seed.h),
// and receivers check the group id and epoch in every lanecast header.
inline PeerAddress group_mac(const GroupAddressSeed& seed, uint16_t lane) {
  uint8_t m[6];
  std::memcpy(m, seed.bytes, 6);
  m[0] |= 0x03;
  if (m[0] == 0x33) m[0] = 0x37;  // 33:33:... is IPv6 multicast, which hosts join
  m[5] = static_cast<uint8_t>(m[5] + lane);
  if (std::memcmp(m, kBroadcast, 6) == 0) m[1] = 0xfe;  // never the broadcast address
  return to_peer(m);
}

}  // namespace lanecast::drivers::ethernet
