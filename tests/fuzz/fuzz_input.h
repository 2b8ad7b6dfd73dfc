// The input formats of the fuzz targets, shared by the targets (which decode
// them) and by make_corpus.cc (which writes the seed corpus in them).
//
// Checksums stop a fuzzer at the door: a random mutation of a frame almost
// never carries a right CRC-32C, so both formats have fix-up bits that make a
// frame's checksums (and a data frame's payload_len) agree with its bytes
// before it is sent. With them off, the exact bytes are sent: bad checksums
// stay reachable too.
#pragma once

#include <rte_byteorder.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "algos/registry.h"
#include "engine/crc32c.h"
#include "engine/wire.h"

namespace lanecast::fuzz {

namespace wire = engine::wire;

// --- wire_fuzz ---------------------------------------------------------------
//
//   byte 0   mode: bits 0-1 link header length (kWireLinkBytes), bit 2 header
//            CRC fixed up, bit 3 payload fixed up, bit 4 frame split in two
//            chained mbufs
//   byte 1   where a split frame is cut (modulo its length + 1)
//   rest     the frame, link header included
inline constexpr uint16_t kWireLinkBytes[4] = {14, 0, 18, 14};
inline constexpr uint8_t kWireFixHeader = 4, kWireFixPayload = 8, kWireChained = 16;
inline constexpr size_t kWirePrefix = 2;

// --- node_fuzz ---------------------------------------------------------------
//
//   (an input of odd length runs a fail-stop group: NodeConfig::fail_stop)
//   byte 0   scenario: bit 0 members (2 or 3), bits 1-3 algorithm
//            (kNodeAlgos), bits 4-5 message size (kNodeSizes), bit 6 nobody
//            posts the broadcast before the frames (they meet the stash);
//            clear: every member but the root (rank 0) has posted it (they
//            meet a running operation) and the root posts it when a record
//            says so or after the last; bit 7 two lanes
//   then records, until the input ends:
//   byte     sender and checks: bits 0-1 the fabric port that sends (a
//            member's own port, forging for it; numbers past the members
//            name the attacker's port), bits 2-3 destination rank (modulo
//            the members), bit 4 header CRC fixed up, bit 5 payload fixed up,
//            bit 6 raw (the bytes carry their own link header), bit 7 lane 1
//   byte     then: bits 0-5 switch rounds to run (1 us of virtual time each),
//            bit 6 first let a quarter of the peer timeout pass unpolled,
//            bit 7 first post the broadcast on every member yet to
//   2 bytes  length of the frame bytes, little-endian (clamped to what is left)
//   bytes    the lanecast header, body and payload (or the whole frame if raw)
inline constexpr uint32_t kNodeGroup = 7;
inline constexpr uint32_t kNodeEpoch = 3;
inline constexpr uint32_t kNodeSegment = 256;
inline constexpr uint8_t kNodeThreeMembers = 1, kNodePostAfter = 64, kNodeTwoLanes = 128;
inline constexpr uint8_t kNodeFixHeader = 16, kNodeFixPayload = 32, kNodeRaw = 64, kNodeLane1 = 128;
inline constexpr uint8_t kNodeRoundsMask = 63, kNodeWait = 64, kNodePost = 128;
inline constexpr algos::Algo kNodeAlgos[8] = {
    algos::Algo::Chain,  algos::Algo::Linear,           algos::Algo::Binomial,  algos::Algo::McastChain,
    algos::Algo::Binary, algos::Algo::ScatterAllgather, algos::Algo::Multilane, algos::Algo::Symmetric};
inline constexpr uint64_t kNodeSizes[4] = {3 * kNodeSegment + 5, 1, 0, 8 * kNodeSegment};
inline constexpr size_t kNodeRecordHeader = 4;

// Byte i of broadcast `op`'s message at its root, in node_fuzz: seeds that
// copy a real frame carry the same bytes.
inline uint8_t node_byte(size_t i, uint32_t op) { return static_cast<uint8_t>(i * 7 + op * 31 + 1); }

inline uint32_t node_members(uint8_t scenario) { return 2 + (scenario & kNodeThreeMembers); }
inline algos::Algo node_algo(uint8_t scenario) { return kNodeAlgos[(scenario >> 1) & 7]; }
inline uint64_t node_size(uint8_t scenario) { return kNodeSizes[(scenario >> 4) & 3]; }
inline uint8_t node_record_from(uint32_t port) { return static_cast<uint8_t>(port & 3); }
inline uint8_t node_record_to(uint32_t rank) { return static_cast<uint8_t>((rank & 3) << 2); }

// --- fix-ups (on the lanecast header: `f` points past the link header) -------

namespace detail {
inline void put32(uint8_t* at, uint32_t v) {
  v = rte_cpu_to_le_32(v);
  std::memcpy(at, &v, 4);
}
inline size_t body_bytes(uint8_t type) {
  using wire::FrameType;
  if (type == static_cast<uint8_t>(FrameType::Data) || type == static_cast<uint8_t>(FrameType::Datagram))
    return sizeof(wire::DataBody);
  if (type == static_cast<uint8_t>(FrameType::Ack)) return sizeof(wire::AckBody);
  return 0;
}
}  // namespace detail

// A data frame's payload_len and payload_crc made to describe its payload.
inline void fix_payload(uint8_t* f, size_t len) {
  if (len < wire::kDataHeaderBytes || detail::body_bytes(f[1]) != sizeof(wire::DataBody)) return;
  uint8_t* body = f + sizeof(wire::FrameHeader);
  const auto payload = static_cast<uint32_t>(len - wire::kDataHeaderBytes);
  detail::put32(body + offsetof(wire::DataBody, payload_len), payload);
  detail::put32(body + offsetof(wire::DataBody, payload_crc),
                engine::crc32c(0, f + wire::kDataHeaderBytes, payload));
}

// header_crc made right for whatever the header and body now say.
inline void fix_header_crc(uint8_t* f, size_t len) {
  if (len < sizeof(wire::FrameHeader)) return;
  const size_t covered = sizeof(wire::FrameHeader) + detail::body_bytes(f[1]);
  if (covered == sizeof(wire::FrameHeader) || len < covered) return;
  detail::put32(f + offsetof(wire::FrameHeader, header_crc), 0);
  detail::put32(f + offsetof(wire::FrameHeader, header_crc), engine::crc32c(0, f, covered));
}

}  // namespace lanecast::fuzz
