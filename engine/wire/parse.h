// Reading a frame's headers: wire::parse, inline here so the receive path
// (Node::handle_frame) takes every frame's checks without a call, its
// results kept in registers instead of written out and read back - the
// receive side's largest single step. wire.cc's parse() is this function for
// every other caller; the write side (wire.cc) shares the helpers below.
#pragma once

#include <rte_byteorder.h>
#include <rte_mbuf.h>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#if defined(__SSE4_2__)
#include <nmmintrin.h>
#endif

#include "engine/checksum/crc32c.h"
#include "engine/wire/wire.h"

namespace lanecast::engine::wire {
namespace detail {

// The wire is little-endian; these are no-ops on x86 and arm64.
template <typename T>
inline T le(T v) {
  if constexpr (sizeof(T) == 2) return rte_le_to_cpu_16(v);
  if constexpr (sizeof(T) == 4) return rte_le_to_cpu_32(v);
  if constexpr (sizeof(T) == 8) return rte_le_to_cpu_64(v);
  return v;
}

// Each body between host and wire order (each conversion is its own
// inverse), reserved bytes zeroed.
inline void data_to_wire(DataBody& b) {
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

inline void ack_to_wire(AckBody& b) {
  b.cum_ack = le(b.cum_ack);
  b.lane = le(b.lane);
  b.reserved = 0;
  b.sack[0] = le(b.sack[0]);
  b.sack[1] = le(b.sack[1]);
  b.newest_seq = le(b.newest_seq);
  b.reserved2 = 0;
  b.newest_rx_ns = le(b.newest_rx_ns);
}

inline void hello_to_wire(HelloBody& b) {
  b.incarnation = le(b.incarnation);
  b.spec_digest = le(b.spec_digest);
  b.sent_unix_ms = le(b.sent_unix_ms);
  b.formation = le(b.formation);
  b.nodes = le(b.nodes);
  b.lanes = le(b.lanes);
  b.reserved = 0;
}

inline void failed_to_wire(FailedBody& b) {
  b.op = le(b.op);
  b.culprit = le(b.culprit);
  b.reporter = le(b.reporter);
  b.reserved[0] = b.reserved[1] = b.reserved[2] = 0;
}

// The body's length by frame type; 0 for a type that has none.
inline size_t body_bytes(FrameType t) {
  switch (t) {
    case FrameType::Data:
    case FrameType::Datagram: return sizeof(DataBody);
    case FrameType::Ack: return sizeof(AckBody);
    case FrameType::Hello: return sizeof(HelloBody);
    case FrameType::Failed: return sizeof(FailedBody);
  }
  return 0;
}

// The header CRC: CRC-32C over the frame header and body with the header_crc
// field read as zero, computed in place. Every frame pays it twice (sent and
// received), so it is summed with the crc32 instruction where the build has
// it (its x86 baseline, DPDK's -march, does), a qword at a time, instead of
// going through crc32c()'s dispatch and a copy of the headers. Header and
// body lengths are whole qwords (static_asserts in wire.h); each body length
// gets its own unrolled copy (header_crc_of).
template <size_t kBodyLen>
inline uint32_t header_crc(const uint8_t* at) {
#if defined(__SSE4_2__)
  if constexpr (std::endian::native == std::endian::little) {
    uint64_t q;
    std::memcpy(&q, at, 8);
    uint64_t c = _mm_crc32_u64(0xFFFFFFFFu, q);
    std::memcpy(&q, at + 8, 8);
    c = _mm_crc32_u64(c, q);
    std::memcpy(&q, at + 16, 8);
    c = _mm_crc32_u64(c, q & 0xFFFFFFFF00000000u);  // bytes 16..19 are header_crc: zero
    for (size_t i = 0; i < kBodyLen; i += 8) {
      std::memcpy(&q, at + sizeof(FrameHeader) + i, 8);
      c = _mm_crc32_u64(c, q);
    }
    return ~static_cast<uint32_t>(c);
  }
#endif
  uint8_t scratch[sizeof(FrameHeader) + kBodyLen];
  std::memcpy(scratch, at, sizeof scratch);
  std::memset(scratch + offsetof(FrameHeader, header_crc), 0, sizeof(uint32_t));
  return crc32c(0, scratch, sizeof scratch);
}

// The header CRC of a frame of type t (whose body_bytes(t) is not 0).
inline uint32_t header_crc_of(FrameType t, const uint8_t* at) {
  switch (t) {
    case FrameType::Data:
    case FrameType::Datagram: return header_crc<sizeof(DataBody)>(at);
    case FrameType::Ack: return header_crc<sizeof(AckBody)>(at);
    case FrameType::Hello: return header_crc<sizeof(HelloBody)>(at);
    case FrameType::Failed: return header_crc<sizeof(FailedBody)>(at);
  }
  return 0;
}

}  // namespace detail

// What parse() does (wire.h), for the receive path to inline.
inline Verdict parse_frame(const rte_mbuf* m, uint16_t link_bytes, Parsed* out) {
  using detail::le;
  const uint32_t total = m->pkt_len;
  if (total < link_bytes + sizeof(FrameHeader)) return Verdict::TooShort;
  if (m->data_len < link_bytes + sizeof(FrameHeader)) return Verdict::HeaderSplit;
  const uint8_t* p = rte_pktmbuf_mtod_offset(m, const uint8_t*, link_bytes);

  FrameHeader h;
  std::memcpy(&h, p, sizeof h);
  if (h.version != kVersion) return Verdict::BadVersion;
  const auto type = static_cast<FrameType>(h.type);
  const size_t body_len = detail::body_bytes(type);
  if (body_len == 0) return Verdict::BadType;
  const bool sealed = (le(h.flags) & kFlagSealed) != 0;
  const uint32_t headers =
      link_bytes + static_cast<uint32_t>(sizeof(FrameHeader) + body_len) + (sealed ? seal_bytes(type) : 0);
  if (total < headers) return Verdict::TooShort;
  if (m->data_len < headers) return Verdict::HeaderSplit;

  // Header CRC: over the headers with the crc field read as zero.
  if (detail::header_crc_of(type, p) != le(h.header_crc)) return Verdict::BadHeaderCrc;

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
    detail::ack_to_wire(out->ack);  // the conversion is its own inverse
    return Verdict::Ok;
  }
  if (out->type == FrameType::Hello) {
    std::memcpy(&out->hello, p + sizeof(FrameHeader), sizeof(HelloBody));
    detail::hello_to_wire(out->hello);
    return Verdict::Ok;
  }
  if (out->type == FrameType::Failed) {
    std::memcpy(&out->failed, p + sizeof(FrameHeader), sizeof(FailedBody));
    detail::failed_to_wire(out->failed);
    return Verdict::Ok;
  }
  std::memcpy(&out->data, p + sizeof(FrameHeader), sizeof(DataBody));
  detail::data_to_wire(out->data);
  if (out->data.payload_len != total - headers) return Verdict::BadLength;
  return Verdict::Ok;
}

}  // namespace lanecast::engine::wire
