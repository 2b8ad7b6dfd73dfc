// The bodies of a stream's frames (kFlagStream). They take a DataBody's
// place in the frame, with its size and the same field widths at the same
// offsets - so parse() reads them as it reads any data body, and the bytes
// on the wire stay those of version 6 - but each names what it carries:
//
//   StreamBatch     a data frame (or a multicast datagram) with a batch of
//                   messages as its payload;
//   StreamReport    a datagram with kFlagSignal: a member tells its parent in
//                   the stream's tree what its subtree delivered and holds;
//   StreamEviction  a datagram with kFlagSignal and kFlagEvicted: a member
//                   tells every other that it left the stream for being slow.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "engine/wire/wire.h"

namespace lanecast::engine::wire {

struct StreamBatch {
  uint32_t stream;        // the publisher's stream index
  uint32_t publisher;     // the publisher's rank
  uint32_t seq;           // reliable-channel sequence number; 0 in a datagram
  uint32_t batch_low;     // the batch number's low 32 bits
  uint64_t first_msg;     // the sequence number of the first message a record of it starts or continues
  uint64_t records;       // records in the payload
  uint32_t payload_len;
  uint32_t payload_crc;   // 0 when sealed (the publisher's payload seal stands in)
  uint32_t segment_bytes; // the sender's segment size: both ends agree on it
  uint8_t reserved0;
  uint8_t lane;           // the lane it was sent on
  uint16_t reserved1;
};

struct StreamReport {
  uint32_t stream;
  uint32_t publisher;
  uint32_t gap;           // over multicast: batches missing from held_below on (0: none)
  uint32_t slowest;       // the member of the sender's subtree furthest behind
  uint64_t delivered;     // every batch below it was delivered in the sender's subtree
  uint64_t held;          // the sender holds every batch below it (over multicast; 0: not said)
  uint32_t payload_len;   // 0: no payload
  uint32_t payload_crc;
  uint32_t segment_bytes;
  uint8_t reserved0;
  uint8_t lane;
  uint16_t reserved1;
};

struct StreamEviction {
  uint32_t stream;
  uint32_t publisher;
  uint32_t reserved0;
  uint32_t member;        // who left: the sender itself (a member tells only of itself)
  uint64_t reserved1;
  uint64_t reserved2;
  uint32_t payload_len;   // 0: no payload
  uint32_t payload_crc;
  uint32_t segment_bytes;
  uint8_t reserved3;
  uint8_t lane;
  uint16_t reserved4;
};

// Each body is a DataBody read otherwise: same size, same widths at the same
// offsets (byte order is converted per field, so widths must match).
#define LANECAST_SAME_SLOT(Body, field, data_field)                                     \
  static_assert(offsetof(Body, field) == offsetof(DataBody, data_field) &&             \
                sizeof(Body::field) == sizeof(DataBody::data_field))
#define LANECAST_STREAM_BODY(Body, f0, f1, f2, f3, f4, f5)                             \
  static_assert(sizeof(Body) == sizeof(DataBody));                                      \
  LANECAST_SAME_SLOT(Body, f0, op);                                                     \
  LANECAST_SAME_SLOT(Body, f1, root);                                                   \
  LANECAST_SAME_SLOT(Body, f2, seq);                                                    \
  LANECAST_SAME_SLOT(Body, f3, segment);                                                \
  LANECAST_SAME_SLOT(Body, f4, offset);                                                 \
  LANECAST_SAME_SLOT(Body, f5, total_len);                                              \
  LANECAST_SAME_SLOT(Body, payload_len, payload_len);                                   \
  LANECAST_SAME_SLOT(Body, payload_crc, payload_crc);                                   \
  LANECAST_SAME_SLOT(Body, segment_bytes, segment_bytes);                               \
  LANECAST_SAME_SLOT(Body, lane, lane)
LANECAST_STREAM_BODY(StreamBatch, stream, publisher, seq, batch_low, first_msg, records);
LANECAST_STREAM_BODY(StreamReport, stream, publisher, gap, slowest, delivered, held);
LANECAST_STREAM_BODY(StreamEviction, stream, publisher, reserved0, member, reserved1, reserved2);
#undef LANECAST_STREAM_BODY
#undef LANECAST_SAME_SLOT

// A stream frame's body as parse() gave it (p.flags has kFlagStream).
template <class Body>
Body stream_body(const Parsed& p) {
  Body b;
  std::memcpy(&b, &p.data, sizeof b);
  return b;
}

// Writes a stream frame's header and body, header_crc filled in, at `at`
// (kFlagStream added to `flags`).
template <class Body>
void write_stream(uint8_t* at, const Origin& from, const Body& body, uint16_t flags, FrameType type) {
  DataBody d;
  std::memcpy(&d, &body, sizeof d);
  write_data(at, from, d, static_cast<uint16_t>(flags | kFlagStream), type);
}

}  // namespace lanecast::engine::wire
