// Which of a sender's counters a receiver has accepted: the anti-replay
// window of IPsec (RFC 4303, 3.4.3) kept as RFC 6479 suggests - a ring of
// 64-bit blocks behind the highest counter seen, so a new counter ahead of
// the window clears whole blocks instead of shifting bits, and a check is a
// shift and a mask. A counter is accepted once; one older than the window
// is refused whether it was seen or not (the sender sends it again under a
// new counter if it matters: every retransmission is a new frame).
//
// check() then accept(): the receiver updates the window only after the
// frame's tag verified, so forged counters move nothing.
#pragma once

#include <array>
#include <cstdint>

namespace lanecast::engine::auth {

class ReplayWindow {
 public:
  static constexpr uint32_t kBlocks = 32;  // 2048 counters, 1984 of them behind the highest
  static constexpr uint64_t kSpan = (kBlocks - 1) * 64;
  enum class Check : uint8_t { New, Replayed, Stale };

  Check check(uint64_t c) const {
    if (!seen_ || c > top_) return Check::New;
    if (top_ - c >= kSpan) return Check::Stale;
    return (bits_[(c >> 6) % kBlocks] >> (c & 63)) & 1 ? Check::Replayed : Check::New;
  }
  // Precondition: check(c) == Check::New.
  void accept(uint64_t c) {
    if (!seen_) {
      seen_ = true;
      top_ = c;
      bits_.fill(0);
    } else if (c > top_) {
      const uint64_t from = (top_ >> 6) + 1, to = c >> 6;  // blocks that come into the window
      for (uint64_t b = from; b <= to && b - from < kBlocks; ++b) bits_[b % kBlocks] = 0;
      top_ = c;
    }
    bits_[(c >> 6) % kBlocks] |= uint64_t{1} << (c & 63);
  }
  uint64_t top() const { return top_; }

 private:
  std::array<uint64_t, kBlocks> bits_{};
  uint64_t top_ = 0;
  bool seen_ = false;
};

}  // namespace lanecast::engine::auth
