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
#include "engine/checksum/crc32c.h"
#include "engine/wire/wire.h"

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
//   byte 0   scenario: bit 0 members (2 or 3), bits 1-3 algorithm
//            (kNodeAlgos), bits 4-5 message size (kNodeSizes), bit 6 nobody
//            posts the broadcast before the frames (they meet the stash);
//            clear: every member but the root (rank 0) has posted it (they
//            meet a running operation) and the root posts it when a record
//            says so or after the last; bit 7 two lanes
//   byte 1   group: bit 0 fail-stop (NodeConfig::fail_stop), bit 1 the
//            members hold a group key (every frame sealed)
//   then records, until the input ends:
//   byte     sender and checks: bits 0-1 the fabric port that sends (a
//            member's own port, forging for it; numbers past the members
//            name the attacker's port), bits 2-3 destination rank (modulo
//            the members), bit 4 header CRC fixed up, bit 5 payload fixed up,
//            bit 6 raw (the bytes carry their own link header), bit 7 lane 1
//   byte     then: bits 0-5 switch rounds to run (each to the next timer of
//            a member or the switch, 1 to 20 us of virtual time), bit 6
//            first let a quarter of the peer timeout pass unpolled, bit 7
//            first post the broadcast on every member yet to
//   2 bytes  length of the frame bytes, little-endian (clamped to what is left)
//   bytes    the lanecast header, body and payload (or the whole frame if raw)
// or, with bit 15 of the length set (kNodeReplay), a replay:
//   2 bytes  which of the frames the members sent so far (their ports' taps,
//            rank 0's first), little-endian, modulo their number
//   bytes    (the length's bits 0-14) XORed onto the frame from its lanecast
//            header on; it goes to the destination rank with its sender's
//            MAC kept, or raw to whom it went; the fix-up bits apply after
inline constexpr uint32_t kNodeGroup = 7;
inline constexpr uint32_t kNodeEpoch = 3;
inline constexpr uint32_t kNodeSegment = 256;
inline constexpr uint8_t kNodeThreeMembers = 1, kNodePostAfter = 64, kNodeTwoLanes = 128;
inline constexpr uint8_t kNodeFailStop = 1, kNodeKeyed = 2;
inline constexpr uint16_t kNodeReplay = 0x8000;
inline constexpr size_t kNodePrefix = 2;  // scenario, group
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

// --- stream_fuzz -------------------------------------------------------------
//
// Rank 0 publishes a real stream (its stream 0); the input plays the parent
// of a member in other streams (stream 1 of any member), on lane 1 - a
// channel of the parent's that the real members leave idle, so the
// fuzzer's channel sequence numbers are right and its frames reach the
// stream layer.
//
//   byte 0   scenario: bit 0 members (2 or 3), bit 1 the streams' tree is
//            binary (else a chain), bits 2-4 ranks 0, 1, 2 take messages
//            in a handler (else from the delivery ring), bit 5 a fail-stop
//            group, bit 6 streams over multicast (the star tree; reports
//            carry what a member holds and its first gap), bit 7 a group
//            with a key, the input playing a member that holds it: every
//            frame sealed as the member it comes from would seal it (the
//            member's own counters), payloads sealed as their publisher
//            would - so they reach the stream layer through the keyed
//            receive path; kStreamBadCrc spoils the payload's seal instead
//            of its CRC, and a frame sent again unchanged is a replay
//   then records, until the input ends:
//   byte     kind (bits 0-2, kStream*) and its flags (bits 3-7)
//   byte     then: bits 0-2 switch rounds to run (each to the next timer
//            of a member or the switch, 1 to 100 us of virtual time), bit 6
//            first let a quarter of the peer timeout pass unpolled
//   and the kind's fields:
//   Batch    byte where: bits 0-1 destination rank, bits 2-3 publisher
//            (both modulo the members), bit 4 stream 2 (no member has one),
//            bit 5 a wrong segment size, bit 6 one record more than it
//            holds, bit 7 one fewer
//            2 bytes batch number: a signed offset from the stream's next
//            (one past the highest sent less than 64 ahead of it: one
//            further probes the window), little-endian
//            byte records: bits 0-2 records - 1, bit 3 the batch number
//            half the 32-bit space away
//            per record 6 bytes: flags (bit 0 kMorePieces, bit 1
//            kContinuation, bits 2-3 the head's piece length: as held,
//            one more, one fewer, or 2^29 more), piece bytes (2,
//            little-endian, modulo kStreamPieceMod), bytes of the message
//            beyond this piece (2, little-endian), content seed (also its
//            time stamp)
//            flags: kStreamNotParent (from a member that is not the
//            destination's parent), kStreamBadCrc, kStreamAbandoned (the
//            parent gave the batch up: no payload), kStreamSeqAhead (a
//            channel sequence number past the receiver's window),
//            kStreamDatagram (a datagram, as from the group address: no
//            channel, no sequence number)
//   Report   byte where: bits 0-1 destination, bits 2-3 publisher, bit 4
//            the real stream (rank 0's stream 0; else the publisher's
//            stream 1)
//            byte mark: a signed offset from the stream's next batch (also
//            what it holds)
//            byte the member reported furthest behind; its high 4 bits the
//            first gap (over multicast)
//            flags: kStreamNotParent (from a member that is not a child),
//            kStreamNoSignal (a stream datagram that is not a report)
//   Resend   byte which: a frame sent before, 0 the last, counting back
//            flags: kStreamFreshSeq (a new sequence number: the parent's
//            copy after a lost ack; else the very frame again)
//   Publish  2 bytes message length, little-endian (modulo the largest + 1)
//   Drain    byte: bits 0-1 member, bit 2 its application stops taking
//            messages from the ring (else takes them again)
//   others   no fields
inline constexpr uint8_t kStreamThreeMembers = 1, kStreamBinaryTree = 2, kStreamHandler0 = 4, kStreamFailStop = 32,
                         kStreamMulticast = 64, kStreamKeyed = 128;
inline constexpr uint8_t kStreamBatch = 0, kStreamReport = 1, kStreamResend = 2, kStreamPublish = 3, kStreamDrain = 4;
inline constexpr uint8_t kStreamKindMask = 7;
inline constexpr uint8_t kStreamNotParent = 8, kStreamBadCrc = 16, kStreamAbandoned = 32, kStreamSeqAhead = 64,
                         kStreamDatagram = 128;
inline constexpr uint8_t kStreamNoSignal = 16, kStreamFreshSeq = 8;
inline constexpr uint8_t kStreamNoStream = 16, kStreamBadSegment = 32, kStreamMoreRecords = 64,
                         kStreamFewerRecords = 128;
inline constexpr uint8_t kStreamFarBatch = 8, kStreamRealStream = 16, kStreamStopTaking = 4;
inline constexpr uint8_t kStreamRoundsMask = 7, kStreamWait = 64;
inline constexpr uint32_t kStreamPieceMod = 512;
inline constexpr size_t kStreamRecordHeader = 2, kStreamBatchFields = 4, kStreamRecordFields = 6;
inline constexpr uint16_t kStreamLane = 1;  // the fuzzer's channels

inline uint32_t stream_members(uint8_t scenario) { return 2 + (scenario & kStreamThreeMembers); }
inline uint32_t stream_fanout(uint8_t scenario) {
  if (scenario & kStreamMulticast) return stream_members(scenario) - 1;  // the star
  return (scenario & kStreamBinaryTree) ? 2 : 1;
}

// Byte i of the real stream's message `seq`, and its time stamp.
inline uint8_t stream_byte(size_t i, uint64_t seq) { return static_cast<uint8_t>(i * 13 + seq * 29 + 5); }
inline uint64_t stream_stamp(uint64_t seq) { return 1'000'000 + seq; }
// Byte i of a forged record's piece with content seed `seed`.
inline uint8_t forged_byte(size_t i, uint8_t seed) { return static_cast<uint8_t>(i * 3 + seed * 101 + 7); }

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

// A data frame's payload_len and payload_crc made to describe its payload
// (after its seals, when its flags say it is sealed).
inline void fix_payload(uint8_t* f, size_t len) {
  if (len < wire::kDataHeaderBytes || detail::body_bytes(f[1]) != sizeof(wire::DataBody)) return;
  const bool sealed = ((f[2] | f[3] << 8) & wire::kFlagSealed) != 0;
  const size_t at = wire::kDataHeaderBytes + (sealed ? 2 * wire::kSealBytes : 0);
  if (len < at) return;
  uint8_t* body = f + sizeof(wire::FrameHeader);
  const auto payload = static_cast<uint32_t>(len - at);
  detail::put32(body + offsetof(wire::DataBody, payload_len), payload);
  detail::put32(body + offsetof(wire::DataBody, payload_crc), engine::crc32c(0, f + at, payload));
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
