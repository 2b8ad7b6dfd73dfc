// The receiving half of a reliable channel from one peer on one lane:
// duplicate suppression and the receive window, and the ack that describes
// them. Frames are accepted out of order (segments carry their own index, so
// there is nothing to reorder); a frame is either new, a duplicate, or beyond
// the window the sender may use. When to send the ack is the node's policy
// (node_rx.cc); this class only says what it contains.
#pragma once

#include <cstdint>

#include "engine/reliable/seq.h"
#include "engine/wire/wire.h"

namespace lanecast::engine::reliable {

class RecvChannel {
 public:
  enum class Check : uint8_t { New, Duplicate, OutOfWindow };

  // The bit of cum_ itself is never set (accept() sets only later ones and
  // clears each as cum_ passes it): the next frame in order needs no lookup.
  Check check(uint32_t seq) const {
    if (seq == cum_) return Check::New;
    if (seq_before(seq, cum_)) return Check::Duplicate;
    const uint32_t d = seq_distance(cum_, seq);
    if (d > wire::kSackBits) return Check::OutOfWindow;
    return test(seq) ? Check::Duplicate : Check::New;
  }

  // Precondition: check(seq) == New. Returns whether it was the next one in
  // order (nothing missing before it): a frame past a gap is worth an ack at
  // once, so the sender learns of the gap. Forced inline, as
  // AckSchedule::accepted: every data frame received comes here.
  [[gnu::always_inline]] bool accept(uint32_t seq) {
    if (seq != cum_) {  // past a gap: cum_ stays until the gap fills
      set(seq);
      return false;
    }
    ++cum_;
    while (test(cum_)) {  // frames that came early, now in order
      clear(cum_);
      ++cum_;
    }
    return true;
  }

  // A frame check() found New arrived at now_ns (the receiver's clock): the
  // newest so far is echoed in the next ack (wire::AckBody::newest_seq).
  void note_arrival(uint32_t seq, uint64_t now_ns) {
    if (newest_rx_ns_ != 0 && !seq_before(newest_seq_, seq)) return;
    newest_seq_ = seq;
    newest_rx_ns_ = now_ns == 0 ? 1 : now_ns;  // 0 says "none yet"
  }

  // A frame check() found Duplicate: the next ack says so (kFlagDuplicates).
  void note_duplicate() { duplicates_ = true; }
  // Whether duplicates came since the last call.
  bool take_duplicates() {
    const bool d = duplicates_;
    duplicates_ = false;
    return d;
  }

  wire::AckBody make_ack(uint16_t lane) const {
    wire::AckBody a{};
    a.cum_ack = cum_;
    a.lane = lane;
    a.sack[0] = bits(cum_ + 1);
    a.sack[1] = bits(cum_ + 65);
    a.newest_seq = newest_seq_;
    a.newest_rx_ns = newest_rx_ns_;
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
  // 64 bits starting at seq s (bit i: s + i), wrapping around the ring.
  uint64_t bits(uint32_t s) const {
    const uint32_t pos = s % kBits, w = pos / 64, o = pos % 64;
    const uint64_t lo = bits_[w] >> o;
    return o == 0 ? lo : lo | bits_[(w + 1) % (kBits / 64)] << (64 - o);
  }

  uint64_t bits_[kBits / 64] = {};
  uint32_t cum_ = 0;
  bool duplicates_ = false;  // since the last ack
  uint32_t newest_seq_ = 0;    // the newest frame that arrived, and when (0: none yet)
  uint64_t newest_rx_ns_ = 0;
};

}  // namespace lanecast::engine::reliable
