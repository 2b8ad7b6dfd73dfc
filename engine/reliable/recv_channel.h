// The receiving half of a reliable channel from one peer: duplicate
// suppression and the receive window, and the ack that describes them.
// Frames are accepted out of order (segments carry their own index, so there
// is nothing to reorder); a frame is either new, a duplicate, or beyond the
// window the sender may use.
#pragma once

#include <cstdint>

#include "engine/reliable/seq.h"
#include "engine/wire.h"

namespace lanecast::engine::reliable {

class RecvChannel {
 public:
  enum class Check : uint8_t { New, Duplicate, OutOfWindow };

  Check check(uint32_t seq) const {
    if (seq_before(seq, cum_)) return Check::Duplicate;
    const uint32_t d = seq_distance(cum_, seq);
    if (d > wire::kSackBits) return Check::OutOfWindow;
    return test(seq) ? Check::Duplicate : Check::New;
  }

  // Precondition: check(seq) == New.
  void accept(uint32_t seq) {
    set(seq);
    while (test(cum_)) {
      clear(cum_);
      ++cum_;
    }
    ack_due_ = true;
  }

  // A duplicate means our ack was lost or late: answer it again.
  void request_ack() { ack_due_ = true; }
  bool ack_due() const { return ack_due_; }

  wire::AckBody make_ack() {
    ack_due_ = false;
    wire::AckBody a{};
    a.cum_ack = cum_;
    for (uint32_t i = 0; i < wire::kSackBits; ++i)
      if (test(cum_ + 1 + i)) a.sack[i / 64] |= uint64_t{1} << (i % 64);
    return a;
  }

  uint32_t cumulative() const { return cum_; }

 private:
  // Bits for seqs cum_ .. cum_ + kSackBits, indexed modulo 256.
  static constexpr uint32_t kBits = 256;
  static_assert(kBits > wire::kSackBits + 1);
  bool test(uint32_t s) const { return bits_[(s % kBits) / 64] >> (s % 64) & 1; }
  void set(uint32_t s) { bits_[(s % kBits) / 64] |= uint64_t{1} << (s % 64); }
  void clear(uint32_t s) { bits_[(s % kBits) / 64] &= ~(uint64_t{1} << (s % 64)); }

  uint64_t bits_[kBits / 64] = {};
  uint32_t cum_ = 0;
  bool ack_due_ = false;
};

}  // namespace lanecast::engine::reliable
