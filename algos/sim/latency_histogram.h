// Latencies in picoseconds, counted in log-linear buckets (as HdrHistogram
// does): 128 buckets per power of two, so a percentile read back is within
// 1/128 of a value counted. Fixed size, no allocation per entry: the stream
// model counts one entry per message and member.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>

#include "algos/sim/latency_map.h"

namespace lanecast::algos::sim {

class LatencyHistogram {
 public:
  void add(Picos v, uint64_t count = 1) {
    counts_[index(v)] += count;
    total_ += count;
    sum_ += static_cast<double>(v) * static_cast<double>(count);
    max_ = std::max(max_, v);
  }
  uint64_t total() const { return total_; }
  Picos max() const { return max_; }
  double mean() const { return total_ ? sum_ / static_cast<double>(total_) : 0; }
  // The smallest value v such that a fraction q of the entries are <= v
  // (within a bucket's width; never above the largest entry).
  Picos quantile(double q) const {
    if (total_ == 0) return 0;
    const auto want = static_cast<uint64_t>(q * static_cast<double>(total_) + 0.5);
    uint64_t seen = 0;
    for (size_t i = 0; i < counts_.size(); ++i) {
      seen += counts_[i];
      if (seen >= std::max<uint64_t>(want, 1)) return std::min(upper(i), max_);
    }
    return max_;
  }

 private:
  static constexpr uint32_t kSubBits = 7;  // 128 buckets per power of two
  static constexpr uint32_t kSub = 1u << kSubBits;
  static size_t index(Picos v) {
    if (v < kSub) return static_cast<size_t>(v);
    const uint32_t top = 63 - static_cast<uint32_t>(std::countl_zero(v));  // >= kSubBits
    const uint32_t shift = top - kSubBits;
    return static_cast<size_t>((shift + 1) * kSub + ((v >> shift) - kSub));
  }
  // The largest value bucket i holds.
  static Picos upper(size_t i) {
    if (i < kSub) return i;
    const uint64_t shift = i / kSub - 1, sub = i % kSub;
    return ((kSub + sub + 1) << shift) - 1;
  }
  std::array<uint64_t, (64 - kSubBits + 1) * kSub> counts_{};
  uint64_t total_ = 0;
  double sum_ = 0;
  Picos max_ = 0;
};

}  // namespace lanecast::algos::sim
