// Where a member's stream messages go once they are in order: the ring of
// delivered messages the application reads (Member::next(), a DeliveredHead
// before each message's bytes), or a handler the application set, called on
// the polling core with each message. The part of a node that owns that
// ring, the handler and the buffer a message in pieces is put together in
// for the handler; engine/stream/stream_delivery.cc decides what is in
// order and asks this part to hand it over.
//
// Threads: set_handler() and ring() are the application's (before any
// stream starts, and any time, respectively); everything else is the
// polling core's; put(), a message's one copy, is inline: it runs per
// message. Memory is made once, by open(), when this member's first
// stream starts; nothing allocates afterwards.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

#include "engine/runtime/counter.h"
#include "engine/stream/aligned_bytes.h"
#include "ipc/delivered_head.h"
#include "ipc/record_ring.h"

namespace lanecast::engine::stream {

class DeliveryTarget {
 public:
  // Called for every message delivered, in order; the bytes are valid
  // during the call. It must not block.
  using Handler = std::function<void(const DeliveredHead&, const uint8_t*, uint32_t)>;
  struct Counters {
    Counter full;  // times a message waited for the application to take earlier ones
  };

  explicit DeliveryTarget(Counters& counters) : counters_(counters) {}
  DeliveryTarget(const DeliveryTarget&) = delete;
  DeliveryTarget& operator=(const DeliveryTarget&) = delete;

  // Application side. A handler instead of the ring: set before any stream
  // starts (open() chooses between them once).
  void set_handler(Handler h);
  // The ring of delivered messages (null until open() made one; always
  // null with a handler): one consumer, the application.
  RecordRingHeader* ring() const { return ring_hdr_.load(std::memory_order_acquire); }

  // Polling core. The first stream started: the ring of `ring_bytes`, or
  // with a handler a buffer for messages of up to `max_message` bytes.
  void open(uint64_t ring_bytes, uint64_t max_message);
  bool to_handler() const { return has_handler_.load(std::memory_order_relaxed); }
  // A whole message: to the handler (no copy) or copied into the ring.
  // False when the ring is full (counted): nothing was taken, try later.
  bool put(const DeliveredHead& head, const uint8_t* bytes, uint32_t len) {
    if (to_handler()) {
      handler_(head, bytes, len);
      return true;
    }
    uint8_t* dst = ring_.reserve(sizeof head + uint64_t{len}, 0);
    if (dst == nullptr) {
      counters_.full.add();
      return false;
    }
    std::memcpy(dst, &head, sizeof head);
    std::memcpy(dst + sizeof head, bytes, len);
    ring_.commit();
    return true;
  }
  // A message in pieces: where to put its `len` bytes together (the ring's
  // room, or the handler's buffer); null when the ring is full (counted).
  // Then finish() hands it over.
  uint8_t* begin(const DeliveredHead& head, uint64_t len);
  void finish(const DeliveredHead& head, const uint8_t* bytes, uint64_t len);

 private:
  Counters& counters_;
  Handler handler_;
  std::atomic<bool> has_handler_{false};
  AlignedBytes ring_mem_;
  RecordRing ring_;
  std::atomic<RecordRingHeader*> ring_hdr_{nullptr};
  std::vector<uint8_t> assembly_;  // a message in pieces, for the handler
};

}  // namespace lanecast::engine::stream
