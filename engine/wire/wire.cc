#include "engine/wire/wire.h"

#include <rte_byteorder.h>
#include <rte_mbuf.h>

#include <bit>
#include <cstring>

#if defined(__SSE4_2__)
#include <nmmintrin.h>
#endif

#include "engine/checksum/crc32c.h"

namespace lanecast::engine::wire {
namespace {

// The header CRC: CRC-32C over the frame header and body with the header_crc
// field read as zero, computed in place. Every frame pays it twice (sent and
// received), so it is inlined with the crc32 instruction where the CPU has it
// instead of going through crc32c()'s dispatch and a copy of the headers.
// Header and body lengths are whole qwords (static_asserts in wire.h).
// The body's length is a constant of each frame type, so each length gets
// its own unrolled copy (header_crc_of).
#if defined(__x86_64__)
template <size_t kBodyLen>
__attribute__((target("sse4.2"))) uint32_t header_crc_hw(const uint8_t* at) {
  uint64_t q;
  std::memcpy(&q, at, 8);
  uint64_t c = __builtin_ia32_crc32di(0xFFFFFFFFu, q);
  std::memcpy(&q, at + 8, 8);
  c = __builtin_ia32_crc32di(c, q);
  std::memcpy(&q, at + 16, 8);
  c = __builtin_ia32_crc32di(c, q & 0xFFFFFFFF00000000u);  // bytes 16..19 are header_crc: zero
  for (size_t i = 0; i < kBodyLen; i += 8) {
    std::memcpy(&q, at + sizeof(FrameHeader) + i, 8);
    c = __builtin_ia32_crc32di(c, q);
  }
  return ~static_cast<uint32_t>(c);
}
const bool kHeaderCrcHw = __builtin_cpu_supports("sse4.2");
#endif

template <size_t kBodyLen>
uint32_t header_crc(const uint8_t* at) {
#if defined(__x86_64__)
  if constexpr (std::endian::native == std::endian::little)
    if (kHeaderCrcHw) return header_crc_hw<kBodyLen>(at);
#endif
  uint8_t scratch[sizeof(FrameHeader) + kBodyLen];
  std::memcpy(scratch, at, sizeof scratch);
  std::memset(scratch + offsetof(FrameHeader, header_crc), 0, sizeof(uint32_t));
  return crc32c(0, scratch, sizeof scratch);
}

// The header CRC of a frame of type t (whose body_bytes(t) is not 0).
uint32_t header_crc_of(FrameType t, const uint8_t* at) {
  switch (t) {
    case FrameType::Data:
    case FrameType::Datagram: return header_crc<sizeof(DataBody)>(at);
    case FrameType::Ack: return header_crc<sizeof(AckBody)>(at);
    case FrameType::Hello: return header_crc<sizeof(HelloBody)>(at);
    case FrameType::Failed: return header_crc<sizeof(FailedBody)>(at);
  }
  return 0;
}

// The wire is little-endian; these are no-ops on x86 and arm64.
template <typename T>
T le(T v) {
  if constexpr (sizeof(T) == 2) return rte_le_to_cpu_16(v);
  if constexpr (sizeof(T) == 4) return rte_le_to_cpu_32(v);
  if constexpr (sizeof(T) == 8) return rte_le_to_cpu_64(v);
  return v;
}

void data_to_wire(DataBody& b) {
  b.op = le(b.op);
  b.root = le(b.root);
  b.seq = le(b.seq);
  b.segment = le(b.segment);
  b.offset = le(b.offset);
  b.total_len = le(b.total_len);
  b.payload_len = le(b.payload_len);
  b.payload_crc = le(b.payload_crc);
  b.segment_bytes = le(b.segment_bytes);
  b.reserved = 0;
}

void ack_to_wire(AckBody& b) {
  b.cum_ack = le(b.cum_ack);
  b.lane = le(b.lane);
  b.reserved = 0;
  b.sack[0] = le(b.sack[0]);
  b.sack[1] = le(b.sack[1]);
  b.newest_seq = le(b.newest_seq);
  b.reserved2 = 0;
  b.newest_rx_ns = le(b.newest_rx_ns);
}

void hello_to_wire(HelloBody& b) {
  b.incarnation = le(b.incarnation);
  b.spec_digest = le(b.spec_digest);
  b.sent_unix_ms = le(b.sent_unix_ms);
  b.formation = le(b.formation);
  b.nodes = le(b.nodes);
  b.lanes = le(b.lanes);
  b.reserved = 0;
}

void failed_to_wire(FailedBody& b) {
  b.op = le(b.op);
  b.culprit = le(b.culprit);
  b.reporter = le(b.reporter);
  b.reserved[0] = b.reserved[1] = b.reserved[2] = 0;
}

// The body's length by frame type; 0 for a type that has none.
size_t body_bytes(FrameType t) {
  switch (t) {
    case FrameType::Data:
    case FrameType::Datagram: return sizeof(DataBody);
    case FrameType::Ack: return sizeof(AckBody);
    case FrameType::Hello: return sizeof(HelloBody);
    case FrameType::Failed: return sizeof(FailedBody);
  }
  return 0;
}

// Made and summed on the stack, then written out whole: `at` is a buffer
// just taken from a pool, often not in the cache, and a CRC read back from
// it would wait for those lines to arrive. `body` is in wire order already.
template <typename Body>
void write_common(uint8_t* at, FrameType type, const Origin& from, const Body& body, uint16_t flags) {
  struct {
    FrameHeader h;
    Body b;
  } f;
  static_assert(sizeof f == sizeof(FrameHeader) + sizeof(Body));
  f.h.version = kVersion;
  f.h.type = static_cast<uint8_t>(type);
  f.h.flags = le(flags);
  f.h.group = le(from.group);
  f.h.src = le(from.src);
  f.h.epoch = le(from.epoch);
  f.h.header_crc = 0;
  f.h.reserved = 0;
  f.b = body;
  f.h.header_crc = le(header_crc<sizeof(Body)>(reinterpret_cast<const uint8_t*>(&f)));
  std::memcpy(at, &f, sizeof f);
}

}  // namespace

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Ok: return "ok";
    case Verdict::TooShort: return "too_short";
    case Verdict::HeaderSplit: return "header_split";
    case Verdict::BadVersion: return "bad_version";
    case Verdict::BadType: return "bad_type";
    case Verdict::BadHeaderCrc: return "bad_header_crc";
    case Verdict::BadLength: return "bad_length";
    case Verdict::BadPayloadCrc: return "bad_payload_crc";
    case Verdict::kCount: break;
  }
  return "?";
}

// A data frame's headers as the nine little-endian qwords they are on the
// wire, composed in registers from the fields and summed a qword at a time:
// every data frame sent pays this, and a header first laid out field by field
// in memory and read back a qword at a time stalls on each narrow store the
// wide read spans (store forwarding fails), which made this the costliest
// step of a forward (docs/engine.md, "One core's cycles").
void write_ack(uint8_t* at, const Origin& from, const AckBody& body, uint16_t flags) {
  AckBody b = body;
  ack_to_wire(b);
  write_common(at, FrameType::Ack, from, b, flags);
}

void write_hello(uint8_t* at, const Origin& from, const HelloBody& body, uint16_t flags) {
  HelloBody b = body;
  hello_to_wire(b);
  write_common(at, FrameType::Hello, from, b, flags);
}

void write_failed(uint8_t* at, const Origin& from, const FailedBody& body, uint16_t flags) {
  FailedBody b = body;
  failed_to_wire(b);
  write_common(at, FrameType::Failed, from, b, flags);
}

void write_payload_seal(uint8_t* at, const Seal& seal) {
  Seal s = seal;
  s.counter = le(s.counter);
  std::memcpy(at + sizeof(FrameHeader) + sizeof(DataBody), &s, sizeof s);
}

uint16_t frame_seal_at(FrameType t) {
  return static_cast<uint16_t>(sizeof(FrameHeader) + body_bytes(t) + (carries_payload(t) ? kSealBytes : 0));
}

Verdict parse(const rte_mbuf* m, uint16_t link_bytes, Parsed* out) {
  const uint32_t total = m->pkt_len;
  if (total < link_bytes + sizeof(FrameHeader)) return Verdict::TooShort;
  if (m->data_len < link_bytes + sizeof(FrameHeader)) return Verdict::HeaderSplit;
  const uint8_t* p = rte_pktmbuf_mtod_offset(m, const uint8_t*, link_bytes);

  FrameHeader h;
  std::memcpy(&h, p, sizeof h);
  if (h.version != kVersion) return Verdict::BadVersion;
  const auto type = static_cast<FrameType>(h.type);
  const size_t body_len = body_bytes(type);
  if (body_len == 0) return Verdict::BadType;
  const bool sealed = (le(h.flags) & kFlagSealed) != 0;
  const uint32_t headers =
      link_bytes + static_cast<uint32_t>(sizeof(FrameHeader) + body_len) + (sealed ? seal_bytes(type) : 0);
  if (total < headers) return Verdict::TooShort;
  if (m->data_len < headers) return Verdict::HeaderSplit;

  // Header CRC: over the headers with the crc field read as zero.
  if (header_crc_of(type, p) != le(h.header_crc)) return Verdict::BadHeaderCrc;

  out->type = type;
  out->flags = le(h.flags);
  out->group = le(h.group);
  out->epoch = le(h.epoch);
  out->src = le(h.src);
  out->payload_offset = headers;
  out->sealed = sealed;
  out->seal_at = sealed ? frame_seal_at(type) : 0;
  if (sealed && carries_payload(type)) {
    std::memcpy(&out->payload_seal, p + sizeof(FrameHeader) + body_len, sizeof(Seal));
    out->payload_seal.counter = le(out->payload_seal.counter);
  }
  if (out->type == FrameType::Ack) {
    std::memcpy(&out->ack, p + sizeof(FrameHeader), sizeof(AckBody));
    ack_to_wire(out->ack);  // the conversion is its own inverse
    return Verdict::Ok;
  }
  if (out->type == FrameType::Hello) {
    std::memcpy(&out->hello, p + sizeof(FrameHeader), sizeof(HelloBody));
    hello_to_wire(out->hello);
    return Verdict::Ok;
  }
  if (out->type == FrameType::Failed) {
    std::memcpy(&out->failed, p + sizeof(FrameHeader), sizeof(FailedBody));
    failed_to_wire(out->failed);
    return Verdict::Ok;
  }
  std::memcpy(&out->data, p + sizeof(FrameHeader), sizeof(DataBody));
  data_to_wire(out->data);
  if (out->data.payload_len != total - headers) return Verdict::BadLength;
  return Verdict::Ok;
}

bool payload_crc_ok(const rte_mbuf* m, const Parsed& p) {
  uint32_t crc;
  return crc32c_mbuf(m, p.payload_offset, p.data.payload_len, &crc) && crc == p.data.payload_crc;
}

}  // namespace lanecast::engine::wire
