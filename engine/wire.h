// lanecast's wire format. A frame is: link header (Ethernet II with EtherType
// 0x88B5, or a verbs pseudo-header) | FrameHeader | body | payload.
//
// Every integer is little-endian on the wire (the hosts we target are; the
// accessors convert, so a big-endian host would still interoperate).
// header_crc is CRC-32C over the frame header and body with header_crc zero;
// payload_crc is CRC-32C over the payload, computed once by the root and carried
// unchanged end to end, so forwarding nodes verify it but never recompute it.
#pragma once

#include <cstddef>
#include <cstdint>

struct rte_mbuf;

namespace lanecast::engine::wire {

inline constexpr uint8_t kVersion = 1;

enum class FrameType : uint8_t { Data = 1, Ack = 2 };

// FrameHeader::flags
inline constexpr uint16_t kFlagAbandoned = 1;  // data of a failed broadcast: ack, drop
// A machine's signal (algos Actions::signal): a data frame of the running
// broadcast without payload, reliable like data; `segment` carries the tag.
inline constexpr uint16_t kFlagSignal = 2;



struct FrameHeader {
  uint8_t version;
  uint8_t type;
  uint16_t flags;
  uint32_t group;
  uint32_t src;         // sender's rank
  uint32_t header_crc;
};
static_assert(sizeof(FrameHeader) == 16);

struct DataBody {
  uint32_t op;            // operation id within the group, from 1
  uint32_t root;
  uint32_t seq;           // reliable-channel sequence number (sender -> receiver)
  uint32_t segment;       // segment index
  uint64_t offset;        // byte offset of the segment in the message
  uint64_t total_len;     // message size
  uint32_t payload_len;
  uint32_t payload_crc;
  uint32_t segment_bytes; // the plan's segment size: checks that both ends agree
  uint8_t algo;
  uint8_t lane;
  uint16_t reserved;
};
static_assert(sizeof(DataBody) == 48);

// Cumulative ack with a selective bitmap: every seq < cum_ack is received, and
// bit i of sack means cum_ack + 1 + i is received too.
struct AckBody {
  uint32_t cum_ack;
  uint32_t reserved;
  uint64_t sack[2];
};
static_assert(sizeof(AckBody) == 24);

inline constexpr uint32_t kDataHeaderBytes = sizeof(FrameHeader) + sizeof(DataBody);
inline constexpr uint32_t kAckHeaderBytes = sizeof(FrameHeader) + sizeof(AckBody);
inline constexpr uint32_t kSackBits = 128;

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
  uint32_t src;
  DataBody data;  // valid when type == Data
  AckBody ack;    // valid when type == Ack
  uint32_t payload_offset;  // from the start of the frame's data
};

// Validates versions, lengths and both checksums of a frame whose link header
// is `link_bytes` long. Never reads past the mbuf chain.
Verdict parse(const rte_mbuf* frame, uint16_t link_bytes, Parsed* out);

// Writes a data header (header_crc filled in) at `at`.
void write_data(uint8_t* at, uint32_t group, uint32_t src, const DataBody& body,
                uint16_t flags = 0);
void write_ack(uint8_t* at, uint32_t group, uint32_t src, const AckBody& body);

}  // namespace lanecast::engine::wire
