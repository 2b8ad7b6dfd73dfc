#include "engine/wire/wire.h"

#include <rte_mbuf.h>

#include <cstring>

#include "engine/checksum/crc32c.h"
#include "engine/wire/parse.h"

namespace lanecast::engine::wire {
namespace {

using detail::ack_to_wire;
using detail::body_bytes;
using detail::failed_to_wire;
using detail::header_crc;
using detail::hello_to_wire;
using detail::le;

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

Verdict parse(const rte_mbuf* m, uint16_t link_bytes, Parsed* out) { return parse_frame(m, link_bytes, out); }

bool payload_crc_ok(const rte_mbuf* m, const Parsed& p) {
  uint32_t crc;
  return crc32c_mbuf(m, p.payload_offset, p.data.payload_len, &crc) && crc == p.data.payload_crc;
}

}  // namespace lanecast::engine::wire
