// How the verbs port names UD endpoints and frames its datagrams.
//
// A member's address (PeerAddress, 23 + 3 x lanes bytes): its port's GID
// (16), LID (2, big-endian; 0 on RoCE), its queue pairs' Q_Key (4,
// big-endian) and the number of lanes (1), then each lane's queue pair
// number (3 bytes, big-endian: QPNs are 24 bits). One
// address names all of a member's lanes, as a MAC does on Ethernet, so the
// engine writes one link header whatever the lane; the lane picks the QPN.
//
// A group address is the 16-byte multicast GID (first byte 0xff) alone; its
// LID is the subnet administrator's to assign when the port joins.
//
// On the wire there is no link header: a UD send carries its destination in
// the work request (address handle, QPN, Q_Key). The engine still writes
// link_header_bytes() in front of each frame it sends; the verbs port puts a
// TxHeader there (an index into its table of destinations, and the
// destination the seal covers; never sent) and posts the frame from the
// byte after it. A receive starts with the 40-byte GRH area; once the
// completion is read the port extends it 8 bytes into the headroom and
// rewrites it as an RxHeader - who sent the datagram, as the adapter
// reported it, and the destination the seal covers - so the engine reads
// the source of every frame at one place whatever the link layer (IB, RoCE
// v2 over IPv4 or IPv6).
#pragma once

#include <arpa/inet.h>
#include <infiniband/verbs.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

#include "drivers/port.h"

namespace lanecast::drivers::verbs {

inline constexpr uint16_t kGrhBytes = 40;           // in front of every UD receive
inline constexpr uint16_t kMaxUdLanes = 4;          // QPNs one address holds
inline constexpr uint32_t kMulticastQpn = 0xFFFFFF;  // the destination QPN of a multicast

struct Endpoint {
  ibv_gid gid{};
  uint16_t lid = 0;
  uint32_t qkey = 0;
  uint8_t lanes = 0;
  uint32_t qpn[kMaxUdLanes] = {};
};

inline constexpr uint8_t kEndpointFixedBytes = 23;  // GID, LID, Q_Key, lanes

inline PeerAddress to_address(const Endpoint& e) {
  PeerAddress a;
  a.len = static_cast<uint8_t>(kEndpointFixedBytes + 3 * e.lanes);
  std::memcpy(a.bytes, e.gid.raw, 16);
  a.bytes[16] = static_cast<uint8_t>(e.lid >> 8);
  a.bytes[17] = static_cast<uint8_t>(e.lid);
  for (int i = 0; i < 4; ++i) a.bytes[18 + i] = static_cast<uint8_t>(e.qkey >> (24 - 8 * i));
  a.bytes[22] = e.lanes;
  for (uint8_t l = 0; l < e.lanes; ++l)
    for (int i = 0; i < 3; ++i)
      a.bytes[kEndpointFixedBytes + 3 * l + i] = static_cast<uint8_t>(e.qpn[l] >> (16 - 8 * i));
  return a;
}

// The endpoint an address names; nullopt unless it is a well-formed member
// address (a group address is not).
inline std::optional<Endpoint> to_endpoint(const PeerAddress& a) {
  if (a.len < kEndpointFixedBytes + 3 || a.len > kEndpointFixedBytes + 3 * kMaxUdLanes ||
      (a.len - kEndpointFixedBytes) % 3 != 0 || a.bytes[22] != (a.len - kEndpointFixedBytes) / 3)
    return std::nullopt;
  Endpoint e;
  std::memcpy(e.gid.raw, a.bytes, 16);
  e.lid = static_cast<uint16_t>(a.bytes[16] << 8 | a.bytes[17]);
  for (int i = 0; i < 4; ++i) e.qkey = e.qkey << 8 | a.bytes[18 + i];
  e.lanes = a.bytes[22];
  for (uint8_t l = 0; l < e.lanes; ++l)
    for (int i = 0; i < 3; ++i) e.qpn[l] = e.qpn[l] << 8 | a.bytes[kEndpointFixedBytes + 3 * l + i];
  return e;
}

// A multicast GID: ff.. (IB, RoCE over IPv6) or ::ffff:224.0.0.0/4 (RoCE v2
// over IPv4, where the GID is the group's IP address).
// "gid fe80::2:c903:1:101 lid 1 qkey 0x1234567 qpn 0x1a2,0x1d7": for logs and
// `lanecast run --show-endpoints`.
inline std::string describe(const Endpoint& e) {
  char gid[INET6_ADDRSTRLEN] = "?";
  inet_ntop(AF_INET6, e.gid.raw, gid, sizeof gid);
  char qkey[16];
  std::snprintf(qkey, sizeof qkey, "0x%x", e.qkey);
  std::string s = std::string("gid ") + gid + " lid " + std::to_string(e.lid) + " qkey " + qkey + " qpn ";
  for (uint8_t l = 0; l < e.lanes; ++l) {
    char q[16];
    std::snprintf(q, sizeof q, "%s0x%x", l ? "," : "", e.qpn[l]);
    s += q;
  }
  return s;
}

inline bool is_group_address(const PeerAddress& a) {
  static constexpr uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return a.len == 16 && (a.bytes[0] == 0xff || (std::memcmp(a.bytes, kMapped, 12) == 0 && (a.bytes[12] & 0xf0) == 0xe0));
}

inline PeerAddress group_of(const ibv_gid& mgid) {
  PeerAddress a;
  a.len = 16;
  std::memcpy(a.bytes, mgid.raw, 16);
  return a;
}

// An IPv4-mapped GID (::ffff:a.b.c.d): RoCE v2 over IPv4.
inline bool is_ipv4_mapped(const ibv_gid& g) {
  static constexpr uint8_t kPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return std::memcmp(g.raw, kPrefix, 12) == 0;
}

// --- what a frame's seal covers of the link header ------------------------
//
// A seal (engine/auth/) must cover the destination, or a frame sealed for
// one member could be readdressed to another and open there. The bytes must
// be the same as the sender wrote them and as the receiver's port presents
// them: the destination member's GID and lane-0 QPN, or a group's multicast
// GID and 0xFFFFFF. The receiver fills them in itself - its own identity, or
// the group the GRH names - so a readdressed frame carries the wrong ones.

struct DestinationBinding {
  uint8_t gid[16];
  uint8_t qpn[4];  // big-endian
};
static_assert(sizeof(DestinationBinding) == 20);

inline DestinationBinding binding_of(const uint8_t gid[16], uint32_t qpn) {
  DestinationBinding b;
  std::memcpy(b.gid, gid, 16);
  b.qpn[0] = static_cast<uint8_t>(qpn >> 24);
  b.qpn[1] = static_cast<uint8_t>(qpn >> 16);
  b.qpn[2] = static_cast<uint8_t>(qpn >> 8);
  b.qpn[3] = static_cast<uint8_t>(qpn);
  return b;
}

// --- the link header of a sent frame (in its headroom, never sent) ----------

struct TxHeader {
  static constexpr uint32_t kMagic = 0x4c435544;  // "LCUD": written by a verbs port
  static constexpr uint32_t kUnresolved = UINT32_MAX;
  uint32_t magic;
  uint32_t dest;  // index into the port's destinations, kUnresolved if none
  uint8_t unused[4];
  DestinationBinding binding;  // sealed
};
static_assert(sizeof(TxHeader) == 32);

// --- the link header of a received frame ------------------------------------
//
// The 40-byte GRH area the adapter wrote, extended 8 bytes into the mbuf's
// headroom, rewritten by the port once the completion is read.

inline constexpr uint16_t kRxHeaderBytes = 48;

struct RxHeader {
  static constexpr uint8_t kHasGrh = 1;     // the adapter reported a GRH: `gid` is the sender's
  static constexpr uint8_t kToGroup = 2;    // sent to a multicast GID
  uint8_t gid[16];                          // the sender's GID (zeros without a GRH)
  uint8_t slid[2];                          // big-endian; 0 on RoCE
  uint8_t src_qpn[3];                       // big-endian
  uint8_t flags;
  uint8_t unused[6];
  DestinationBinding binding;               // sealed: this member, or the group the GRH names
};
static_assert(sizeof(RxHeader) == kRxHeaderBytes);

inline uint32_t src_qpn_of(const RxHeader& h) {
  return uint32_t{h.src_qpn[0]} << 16 | uint32_t{h.src_qpn[1]} << 8 | h.src_qpn[2];
}
inline uint16_t slid_of(const RxHeader& h) { return static_cast<uint16_t>(h.slid[0] << 8 | h.slid[1]); }

// Whether a frame whose RxHeader is `h` came from the member `e`: the QPN
// one of its lanes has, and its GID (when the datagram had a GRH, which a
// multicast and every RoCE datagram has) or else its LID - the two things
// the adapter, not the sender's bytes, reports.
inline bool sent_by(const RxHeader& h, const Endpoint& e) {
  const uint32_t qpn = src_qpn_of(h);
  bool lane = false;
  for (uint8_t l = 0; l < e.lanes; ++l) lane |= e.qpn[l] == qpn;
  if (!lane) return false;
  if (h.flags & RxHeader::kHasGrh) return std::memcmp(h.gid, e.gid.raw, 16) == 0;
  return e.lid != 0 && slid_of(h) == e.lid;
}

}  // namespace lanecast::drivers::verbs
