// Frames in flight, lent to channels that have some.
//
// A node may talk to every other member over a broadcast's life (linear's
// root, symmetric), but only a few at once carry frames in flight. The
// record of frames in flight - a ring of `window` entries, their acked bits
// and the bits of the ones to re-send - is the large part of a channel, so it
// lives here: a fixed number of slabs, made when the group is created, that a
// channel takes when it sends its first frame and gives back when the last
// one is acknowledged. An idle channel is a few scalars (send_channel.h).
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace lanecast::engine::reliable {

// One frame sent and not yet acknowledged.
struct InFlight {
  uint32_t segment = 0;  // segment index, or a signal's tag
  uint32_t op = 0;       // the broadcast it belongs to
  uint64_t sent_ns = 0;  // last (re)transmission
  uint32_t bytes = 0;    // its size on the link: what an ack of it tells rate control was delivered
  uint16_t tries = 0;    // transmissions so far
  uint8_t flags = 0;
  static constexpr uint8_t kSignal = 1;     // a machine's signal: no payload
  static constexpr uint8_t kAbandoned = 2;  // its broadcast failed: re-send empty
  static constexpr uint8_t kFastDone = 4;   // the one fast retransmit of a hole was used
  static constexpr uint8_t kStream = 8;     // a stream's batch (op: its stream slot, segment: the batch)
};

struct FlightSlab {
  InFlight* entries;      // ring, indexed by seq & (ring - 1)
  uint64_t* acked;        // one bit per ring slot
  uint64_t* resend;       // one bit per ring slot: to be sent again
  uint32_t resend_count = 0;
  uint32_t next_free = 0; // the pool's free list
};

// The ring size for a channel of `window` frames: a power of two of at least
// 64, so the bitmaps are whole words.
inline uint32_t flight_ring(uint32_t window) { return std::max<uint32_t>(64, std::bit_ceil(window)); }

class FlightPool {
 public:
  // `slabs` slabs for channels of `window` frames.
  FlightPool(uint32_t slabs, uint32_t window) {
    if (slabs == 0) throw std::invalid_argument("flight pool: at least one slab");
    ring_ = flight_ring(window);
    words_ = ring_ / 64;
    entries_.resize(size_t{slabs} * ring_);
    acked_.resize(size_t{slabs} * words_);
    resend_.resize(size_t{slabs} * words_);
    slabs_.resize(slabs);
    for (uint32_t i = 0; i < slabs; ++i) {
      slabs_[i].entries = &entries_[size_t{i} * ring_];
      slabs_[i].acked = &acked_[size_t{i} * words_];
      slabs_[i].resend = &resend_[size_t{i} * words_];
      slabs_[i].next_free = i + 1;
    }
    free_ = 0;
  }
  FlightPool(const FlightPool&) = delete;
  FlightPool& operator=(const FlightPool&) = delete;

  uint32_t ring() const { return ring_; }
  uint32_t words() const { return words_; }
  uint32_t slabs() const { return static_cast<uint32_t>(slabs_.size()); }
  uint32_t in_use() const { return in_use_; }

  // A cleared slab, or nullptr when all are lent.
  FlightSlab* take() {
    if (free_ >= slabs_.size()) return nullptr;
    FlightSlab* s = &slabs_[free_];
    free_ = s->next_free;
    for (uint32_t w = 0; w < words_; ++w) s->acked[w] = s->resend[w] = 0;
    s->resend_count = 0;
    ++in_use_;
    return s;
  }
  void give_back(FlightSlab* s) {
    s->next_free = free_;
    free_ = static_cast<uint32_t>(s - slabs_.data());
    --in_use_;
  }

  // Bytes this pool holds (for the memory report).
  size_t bytes() const {
    return entries_.size() * sizeof(InFlight) + acked_.size() * 8 + resend_.size() * 8 +
           slabs_.size() * sizeof(FlightSlab);
  }

 private:
  uint32_t ring_ = 1, words_ = 1;
  std::vector<InFlight> entries_;
  std::vector<uint64_t> acked_;
  std::vector<uint64_t> resend_;
  std::vector<FlightSlab> slabs_;
  uint32_t free_ = 0;
  uint32_t in_use_ = 0;
};

}  // namespace lanecast::engine::reliable
