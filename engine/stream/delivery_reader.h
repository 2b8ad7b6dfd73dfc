// Reads a ring of delivered messages (each a DeliveredHead and its bytes,
// record_ring.h) one message at a time, lending each until the next call:
// the engine's Member::next() and the daemon's client library read their
// rings alike. Header-only, so the client library links no engine.
#pragma once

#include <cstddef>
#include <cstring>
#include <span>

#include "engine/stream/batch_format.h"
#include "engine/stream/record_ring.h"

namespace lanecast::engine::stream {

class DeliveryReader {
 public:
  DeliveryReader() = default;
  explicit DeliveryReader(RecordRingHeader* h) : ring_(h) {}
  bool valid() const { return ring_.valid(); }
  bool waiting() const { return !ring_.empty(); }
  // Fills any message type with publisher, stream, seq, timestamp_ns and
  // data; the message lent before is given back first.
  template <class Message>
  bool next(Message& out) {
    if (held_) {
      ring_.pop();
      held_ = false;
    }
    const RecordView r = ring_.peek();
    if (r.data == nullptr || r.len < sizeof(DeliveredHead)) return false;
    DeliveredHead h;
    std::memcpy(&h, r.data, sizeof h);
    out.publisher = h.publisher;
    out.stream = h.stream;
    out.seq = h.seq;
    out.timestamp_ns = h.timestamp_ns;
    out.data = std::span<const std::byte>(reinterpret_cast<const std::byte*>(r.data + sizeof h), r.len - sizeof h);
    held_ = true;
    return true;
  }

 private:
  RecordRing ring_;
  bool held_ = false;
};

}  // namespace lanecast::engine::stream
