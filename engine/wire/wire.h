// lanecast's wire format. A frame is: link header (Ethernet II with EtherType
// 0x88B5, or a verbs pseudo-header) | FrameHeader | body | payload.
//
// Every integer is little-endian on the wire (the hosts we target are; the
// accessors convert, so a big-endian host would still interoperate).
// header_crc is CRC-32C over the frame header and body with header_crc zero;
// payload_crc is CRC-32C over the payload, computed once by the root and carried
// unchanged end to end, so forwarding nodes verify it but never recompute it.
#pragma once

#include <rte_byteorder.h>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#if defined(__SSE4_2__)
#include <nmmintrin.h>
#endif

#include "engine/checksum/crc32c.h"

struct rte_mbuf;

namespace lanecast::engine::wire {

// Version 6: hellos carry the formation the sender heard (every rank's
// incarnation, hashed). Version 5: acks echo when the newest data frame arrived (a sender's
// one-way delay). Version 4: sealed frames (kFlagSealed: a group key's tags) and the
// sender's clock in hellos. Version 3: the group's epoch (incarnation) in
// every frame. Version 2: datagram frames, the ack-now flag, acks per
// (peer, lane).
inline constexpr uint8_t kVersion = 6;

// Data frames go through a reliable channel (sequenced, acknowledged, sent
// again until acknowledged); datagrams do not (no sequence number, never
// acknowledged or sent again: a multicast copy, repaired by the algorithm);
// acks describe one channel.
// Hellos find a group's members before it runs (engine/bootstrap/): sent
// to the link's broadcast address with epoch 0; a running member drops them
// (rx_hello).
// Failure notices spread a fail-stop group's loss of a member to every other
// member (engine/node/node.cc, NodeConfig::fail_stop).
enum class FrameType : uint8_t { Data = 1, Ack = 2, Datagram = 3, Hello = 4, Failed = 5 };

// FrameHeader::flags
inline constexpr uint16_t kFlagAbandoned = 1;  // data of a failed broadcast: ack, drop
// A machine's signal (algos Actions::signal): a data frame of the running
// broadcast without payload, reliable like data; `segment` carries the tag.
inline constexpr uint16_t kFlagSignal = 2;
// The sender wants this frame acknowledged at once: it is the last one it has
// for us in this broadcast, it fills the sender's window, or it was sent
// again. Other data frames are acknowledged in batches (NodeConfig::ack_every)
// or after a short delay (NodeConfig::ack_delay_ns).
inline constexpr uint16_t kFlagAckNow = 4;
// A stream's frame (engine/stream/): its body is one of stream_body.h's, in
// the data body's place - a batch of messages (a data frame or a multicast
// datagram), a report to the parent in the stream's tree (a datagram with
// kFlagSignal), or an eviction notice (with kFlagEvicted too).
inline constexpr uint16_t kFlagStream = 8;
// The frame carries seals (engine/auth/, docs/security.md): after the body,
// a data or datagram frame holds the payload's seal (made once by the root
// or the publisher, carried unchanged by every forwarder) and every frame
// then its own seal, a tag over everything from the link header to it (the
// destination address too: a frame opens only where it was sent).
// The payload's seal stands in for its CRC: payload_crc is 0.
inline constexpr uint16_t kFlagSealed = 16;
// On a stream's datagram (with kFlagStream): the sender left the stream for
// being slow (StreamOptions::evict_after_ms; wire::StreamEviction); every
// other member hears it.
inline constexpr uint16_t kFlagEvicted = 32;
// On an ack: data frames came again on this channel since the receiver's
// last ack - they had arrived before, so a sender that re-sent them on a
// timeout learns that the timeout was spurious (as TCP's D-SACK, RFC 2883).
inline constexpr uint16_t kFlagDuplicates = 64;


struct FrameHeader {
  uint8_t version;
  uint8_t type;
  uint16_t flags;
  uint32_t group;
  uint32_t src;         // sender's rank
  // The group's incarnation: a member that restarts joins a group of a new
  // epoch, so its new frames are never taken for its old life's (sequence
  // numbers start again) and the old life's frames still on the wire are
  // dropped (rx_wrong_epoch).
  uint32_t epoch;
  uint32_t header_crc;
  uint32_t reserved;    // zero
};
static_assert(sizeof(FrameHeader) == 24);

struct DataBody {
  uint32_t op;            // operation id within the group, from 1
  uint32_t root;
  uint32_t seq;           // reliable-channel sequence number (sender -> receiver, per lane); 0 in a datagram
  uint32_t segment;       // segment index
  uint64_t offset;        // byte offset of the segment in the message
  uint64_t total_len;     // message size
  uint32_t payload_len;
  uint32_t payload_crc;
  uint32_t segment_bytes; // the plan's segment size: checks that both ends agree
  uint8_t algo;
  uint8_t lane;           // the lane (and so the channel) it was sent on
  uint16_t reserved;
};
static_assert(sizeof(DataBody) == 48);

// Cumulative ack with a selective bitmap for the channel on `lane`: every seq
// < cum_ack is received, and bit i of sack means cum_ack + 1 + i is too.
// newest_seq is the newest (highest) seq the receiver has seen on the
// channel and newest_rx_ns its clock when that frame arrived (0: none yet):
// the sender, knowing when it sent it, learns the one-way delay up to a
// constant (the two clocks' offset), so the queue on the way there apart
// from the one the ack met coming back (reliable/rate_control.h).
struct AckBody {
  uint32_t cum_ack;
  uint16_t lane;
  uint16_t reserved;
  uint64_t sack[2];
  uint32_t newest_seq;
  uint32_t reserved2;
  uint64_t newest_rx_ns;
};
static_assert(sizeof(AckBody) == 40);

// A member announcing itself to its group (wire discovery): who it is, this
// life of its process, what it was told the group is, and whether it has
// heard every other rank yet - and which lives it heard, so that members
// start only once all of them heard the same ones.
struct HelloBody {
  uint64_t incarnation;   // random per process start: a restart is a new member
  uint64_t spec_digest;   // of the group settings every member must share
  uint64_t sent_unix_ms;  // the sender's wall clock: a sealed hello from long ago is a replay
  uint64_t formation;     // with heard_all: every rank's incarnation as heard, hashed (formation_of)
  uint32_t nodes;         // the group's size as the sender knows it
  uint16_t lanes;
  uint8_t heard_all;      // 1: the sender has heard every rank's hello
  uint8_t reserved;
};
static_assert(sizeof(HelloBody) == 40);

// "Rank `culprit` is lost (seen by `reporter` during broadcast `op`)".
struct FailedBody {
  uint32_t op;
  uint32_t culprit;   // kNoRank (0xFFFFFFFF) when the reporter could not tell
  uint32_t reporter;
  uint8_t error;      // the reporter's OpError
  uint8_t reserved[3];
};
static_assert(sizeof(FailedBody) == 16);

static_assert(sizeof(DataBody) % 8 == 0 && sizeof(AckBody) % 8 == 0 && sizeof(HelloBody) % 8 == 0 &&
                  sizeof(FailedBody) % 8 == 0,
              "header CRC works in qwords");

// A seal (kFlagSealed): the sealer's counter - the tag's nonce with the
// sealer's rank, never used twice under one key - and the tag.
struct Seal {
  uint64_t counter;
  uint8_t tag[16];
};
static_assert(sizeof(Seal) == 24);
inline constexpr uint32_t kSealBytes = sizeof(Seal);
inline constexpr uint32_t kDataHeaderBytes = sizeof(FrameHeader) + sizeof(DataBody);
inline constexpr uint32_t kAckHeaderBytes = sizeof(FrameHeader) + sizeof(AckBody);
inline constexpr uint32_t kHelloBytes = sizeof(FrameHeader) + sizeof(HelloBody);
inline constexpr uint32_t kFailedBytes = sizeof(FrameHeader) + sizeof(FailedBody);
inline constexpr uint32_t kSackBits = 128;

inline constexpr bool carries_payload(FrameType t) { return t == FrameType::Data || t == FrameType::Datagram; }
// Bytes the seals of a sealed frame of type `t` take after its body: the
// payload's seal (data, datagrams) and the frame's own.
inline constexpr uint32_t seal_bytes(FrameType t) { return carries_payload(t) ? 2 * kSealBytes : kSealBytes; }

// Why a received frame was not accepted; each reason is a counter.
enum class Verdict : uint8_t {
  Ok = 0,
  TooShort,       // shorter than the headers it claims
  HeaderSplit,    // headers not contiguous in the first mbuf
  BadVersion,
  BadType,
  BadHeaderCrc,
  BadLength,      // payload_len disagrees with the frame length
  BadPayloadCrc,
  kCount
};
const char* verdict_name(Verdict v);

// A validated view of a received frame (host byte order).
struct Parsed {
  FrameType type;
  uint16_t flags;
  uint32_t group;
  uint32_t epoch;
  uint32_t src;
  // One body, by type: only the frame's own is ever valid, so they share
  // the bytes (96 for the whole record instead of 200).
  union {
    DataBody data;    // valid when type == Data or Datagram
    AckBody ack;      // valid when type == Ack
    HelloBody hello;  // valid when type == Hello
    FailedBody failed;  // valid when type == Failed
  };
  uint32_t payload_offset;  // from the start of the frame's data
  // Sealed frames (kFlagSealed): where the frame's seal starts, counted from
  // the lanecast header (the tag covers everything before it, the link
  // header included), and the payload's seal of a data frame or datagram.
  bool sealed = false;
  uint16_t seal_at = 0;
  Seal payload_seal{};
};

// Validates the version, lengths and header checksum of a frame whose link
// header is `link_bytes` long. Never reads past the mbuf chain. The payload
// checksum is not checked here: the receiver checks it while copying the
// payload into the application's buffer (payload_crc_ok() otherwise), so each
// payload byte is read once.
Verdict parse(const rte_mbuf* frame, uint16_t link_bytes, Parsed* out);
// Whether the payload of a frame parse() accepted matches its payload_crc.
bool payload_crc_ok(const rte_mbuf* frame, const Parsed& p);

// Who sends a frame: group, its epoch, and the sender's rank.
struct Origin {
  uint32_t group;
  uint32_t epoch;
  uint32_t src;
};

namespace detail {
// The header CRC (CRC-32C over the frame header and body, header_crc read as
// zero) of a header and body still in registers - a frame being written, its
// header_crc word zero, little-endian words: summed where they are. Through
// memory - stored as words, then read back as bytes and as 16-byte pieces by
// the copy into the frame - each wide read of narrow stores waited for them
// to reach the cache (store forwarding fails): in process 9 % of the polling
// core went to that wait.
template <size_t N>
inline uint32_t header_crc_of_words(const uint64_t (&q)[N]) {
#if defined(__SSE4_2__)
  if constexpr (std::endian::native == std::endian::little) {
    uint64_t c = 0xFFFFFFFFu;
    for (const uint64_t w : q) c = _mm_crc32_u64(c, w);
    return ~static_cast<uint32_t>(c);
  }
#endif
  return crc32c(0, q, sizeof q);  // the words are in the wire's order already
}
}  // namespace detail

// Data (or datagram) headers for a run of frames that differ only in seq,
// segment, offset, payload length and CRC (Broadcast::data_frames: a run of
// segments to one peer): the other words, and the header CRC's register over
// the first four of them, once for the run. Inline: every data frame sent is
// written here.
class DataHeaderRun {
 public:
  DataHeaderRun(const Origin& from, const DataBody& b, uint16_t flags = 0, FrameType type = FrameType::Data) {
    static_assert(offsetof(FrameHeader, flags) == 2 && offsetof(FrameHeader, group) == 4 &&
                  offsetof(FrameHeader, src) == 8 && offsetof(FrameHeader, epoch) == 12 &&
                  offsetof(FrameHeader, header_crc) == 16 && offsetof(DataBody, root) == 4 &&
                  offsetof(DataBody, seq) == 8 && offsetof(DataBody, segment) == 12 &&
                  offsetof(DataBody, offset) == 16 && offsetof(DataBody, total_len) == 24 &&
                  offsetof(DataBody, payload_len) == 32 && offsetof(DataBody, payload_crc) == 36 &&
                  offsetof(DataBody, segment_bytes) == 40 && offsetof(DataBody, algo) == 44 &&
                  offsetof(DataBody, lane) == 45,
                  "the qwords below follow these layouts");
    q0_ = rte_cpu_to_le_64(uint64_t{kVersion} | uint64_t{static_cast<uint8_t>(type)} << 8 | uint64_t{flags} << 16 |
                           uint64_t{from.group} << 32);
    q1_ = rte_cpu_to_le_64(uint64_t{from.src} | uint64_t{from.epoch} << 32);
    q3_ = rte_cpu_to_le_64(uint64_t{b.op} | uint64_t{b.root} << 32);
    q6_ = rte_cpu_to_le_64(b.total_len);
    q8_ = rte_cpu_to_le_64(uint64_t{b.segment_bytes} | uint64_t{b.algo} << 32 | uint64_t{b.lane} << 40);  // reserved: 0
#if defined(__SSE4_2__)
    // Words 0-3 (word 2, header_crc and reserved, summed as zero).
    lead_crc_ = _mm_crc32_u64(_mm_crc32_u64(_mm_crc32_u64(_mm_crc32_u64(0xFFFFFFFFu, q0_), q1_), 0), q3_);
#endif
  }
  void write(uint8_t* at, uint32_t seq, uint32_t segment, uint64_t offset, uint32_t payload_len,
             uint32_t payload_crc) const {
    uint64_t q[9];
    q[0] = q0_;
    q[1] = q1_;
    q[2] = 0;  // header_crc, reserved
    q[3] = q3_;
    q[4] = rte_cpu_to_le_64(uint64_t{seq} | uint64_t{segment} << 32);
    q[5] = rte_cpu_to_le_64(offset);
    q[6] = q6_;
    q[7] = rte_cpu_to_le_64(uint64_t{payload_len} | uint64_t{payload_crc} << 32);
    q[8] = q8_;
    // The crc's 4 bytes, then reserved's 4 zero bytes.
    q[2] = rte_cpu_to_le_64(header_crc(q));
    std::memcpy(at, q, sizeof q);
  }

 private:
  // detail::header_crc_of_words(q), continuing from lead_crc_ where it can.
  uint32_t header_crc(const uint64_t (&q)[9]) const {
#if defined(__SSE4_2__)
    if constexpr (std::endian::native == std::endian::little) {
      uint64_t c = lead_crc_;
      for (size_t i = 4; i < 9; ++i) c = _mm_crc32_u64(c, q[i]);
      return ~static_cast<uint32_t>(c);
    }
#endif
    return detail::header_crc_of_words(q);
  }

  uint64_t q0_, q1_, q3_, q6_, q8_;  // in the wire's byte order
  uint64_t lead_crc_ = 0;            // the header CRC's register after words 0-3 (SSE4.2 builds)
};

// Writes a data (or datagram) header, header_crc filled in, at `at`.
inline void write_data(uint8_t* at, const Origin& from, const DataBody& b, uint16_t flags = 0,
                       FrameType type = FrameType::Data) {
  DataHeaderRun(from, b, flags, type).write(at, b.seq, b.segment, b.offset, b.payload_len, b.payload_crc);
}
void write_ack(uint8_t* at, const Origin& from, const AckBody& body, uint16_t flags = 0);
void write_hello(uint8_t* at, const Origin& from, const HelloBody& body, uint16_t flags = 0);
void write_failed(uint8_t* at, const Origin& from, const FailedBody& body, uint16_t flags = 0);
// A sealed data frame's payload seal, after the body at `at` (the lanecast
// header, as written by write_data with kFlagSealed).
void write_payload_seal(uint8_t* at, const Seal& seal);
// Where a sealed frame's own seal goes, from the lanecast header, by type.
uint16_t frame_seal_at(FrameType t);

}  // namespace lanecast::engine::wire
