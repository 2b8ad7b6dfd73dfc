// Reads a ring of delivered messages (each a DeliveredHead and its bytes,
// record_ring.h) one message at a time, lending each until the next call:
// the engine's Member::next() and the daemon's client library read their
// rings alike. Header-only, so the client library links no engine.
//
// A record too short to hold its head is no message: it is skipped and
// counted (skipped()), and the reader goes on with the next one (at most
// kSkipsPerCall of them per call), so such a record can never stall it. A ring whose positions or heads make no sense
// is corrupt(): next() says false for good.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "ipc/delivered_head.h"
#include "ipc/record_ring.h"

namespace lanecast::ipc {

class DeliveryReader {
 public:
  static constexpr int kSkipsPerCall = 64;
  DeliveryReader() = default;
  explicit DeliveryReader(RecordRingHeader* h) : ring_(h) {}  // memory this process owns (the engine)
  explicit DeliveryReader(RecordRing ring) : ring_(ring) {}   // a view made with what this side knows
  bool valid() const { return ring_.valid(); }
  bool waiting() const { return !ring_.empty(); }
  bool corrupt() const { return ring_.corrupt(); }
  uint64_t skipped() const { return skipped_; }
  // Fills any message type with publisher, stream, seq, timestamp_ns and
  // data; the message lent before is given back first.
  template <class Message>
  bool next(Message& out) {
    if (!ring_.valid()) return false;
    if (held_) {
      ring_.pop();
      held_ = false;
    }
    // Each turn takes a record off the ring or returns; a producer that
    // keeps writing short records gets a false now and then, not a reader
    // that never returns.
    for (int turn = 0; turn < kSkipsPerCall + 1; ++turn) {
      const RecordView r = ring_.peek();
      if (r.data == nullptr) return false;
      if (r.len < sizeof(DeliveredHead)) {
        ring_.pop();
        ++skipped_;
        continue;
      }
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
    return false;
  }

 private:
  RecordRing ring_;
  bool held_ = false;
  uint64_t skipped_ = 0;
};

}  // namespace lanecast::ipc

namespace lanecast::engine::stream {
using ipc::DeliveryReader;
}  // namespace lanecast::engine::stream
