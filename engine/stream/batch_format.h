// What a stream frame's payload holds: a batch of records, each a 16-byte
// head and the bytes of one message or of one piece of a message larger
// than what is left of the frame. Pieces of a message follow each other:
// the first ends a batch, the next ones start the following batches.
//
//   | RecordHead | bytes | RecordHead | bytes | ...     (no padding)
//
// The frame's data header says which stream, which batch (the stream's
// frame number) and the sequence number of the first message a record of
// it starts or continues; so every record's message number is known from
// its place. All integers little-endian, as the rest of the wire.
#pragma once

#include <cstdint>
#include <cstring>

#include "ipc/delivered_head.h"  // DeliveredHead: what a delivery ring holds before a message

namespace lanecast::engine::stream {

struct RecordHead {
  uint32_t piece;         // bytes of this record, and the two flags below
  uint32_t message_len;   // the whole message's bytes
  uint64_t timestamp_ns;  // when the publisher published it (engine clock)
};
static_assert(sizeof(RecordHead) == 16);

inline constexpr uint32_t kMorePieces = 1u << 31;    // the message goes on in the next batch
inline constexpr uint32_t kContinuation = 1u << 30;  // not the message's first piece
inline constexpr uint32_t kPieceMask = (1u << 30) - 1;

inline RecordHead read_head(const uint8_t* at) {
  RecordHead h;
  std::memcpy(&h, at, sizeof h);
  return h;
}
inline void write_head(uint8_t* at, const RecordHead& h) { std::memcpy(at, &h, sizeof h); }

constexpr uint32_t kHeadBytes = sizeof(RecordHead);

// Whether a batch's records are well formed: each head and piece within the
// payload, `records` of them, and the pieces of a large message where the
// publisher puts them (form_batch): a piece that says more follow ends its
// batch, a continuation starts one, and neither is empty. The bytes were
// checked against the CRC first.
inline bool records_valid(const uint8_t* p, uint32_t len, uint32_t records) {
  uint32_t off = 0, n = 0;
  while (off < len) {
    if (len - off < kHeadBytes) return false;
    const RecordHead h = read_head(p + off);
    const uint32_t piece = h.piece & kPieceMask;
    const bool more = (h.piece & kMorePieces) != 0;
    const bool continuation = (h.piece & kContinuation) != 0;
    if (piece > len - off - kHeadBytes || piece > h.message_len) return false;
    if (!more && !continuation && piece != h.message_len) return false;
    if ((more || continuation) && piece == 0) return false;
    if (more && (piece == h.message_len || off + kHeadBytes + piece != len)) return false;
    if (continuation && off != 0) return false;
    off += kHeadBytes + piece;
    ++n;
  }
  return n == records && n > 0;
}

}  // namespace lanecast::engine::stream
