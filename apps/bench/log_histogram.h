// A histogram of latencies in log-linear buckets, in the manner of
// HdrHistogram (Gil Tene): each power of two of nanoseconds is split into
// 32 equal buckets, so any value is kept within about 3% in 2 KiB of
// counters, whatever the range, and adding one is a few instructions with no
// allocation (a polling core records into it). Percentiles are read back
// from the buckets; the maximum is kept exactly.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <string>
#include <vector>

namespace lanecast::apps {

class LogHistogram {
 public:
  static constexpr uint32_t kSubBits = 5;  // 32 buckets per power of two
  static constexpr uint32_t kSub = 1u << kSubBits;
  static constexpr uint32_t kBuckets = (64 - kSubBits + 1) * kSub;

  void add(uint64_t ns) {
    ++counts_[index(ns)];
    ++count_;
    max_ = std::max(max_, ns);
    sum_ += ns;
  }
  void merge(const LogHistogram& o) {
    for (uint32_t i = 0; i < kBuckets; ++i) counts_[i] += o.counts_[i];
    count_ += o.count_;
    max_ = std::max(max_, o.max_);
    sum_ += o.sum_;
  }
  uint64_t count() const { return count_; }
  uint64_t max() const { return max_; }
  double mean() const { return count_ ? static_cast<double>(sum_) / static_cast<double>(count_) : 0; }
  // The value at quantile q (0..1): the upper end of the bucket holding it,
  // never above the maximum seen.
  uint64_t percentile(double q) const {
    if (count_ == 0) return 0;
    const auto rank = static_cast<uint64_t>(std::max(1.0, q * static_cast<double>(count_) + 0.5));
    uint64_t seen = 0;
    for (uint32_t i = 0; i < kBuckets; ++i) {
      seen += counts_[i];
      if (seen >= rank) return std::min(upper(i), max_);
    }
    return max_;
  }
  // Counts in coarse bands (powers of two) for printing: {upper_ns, count}
  // for each band that holds anything.
  std::vector<std::pair<uint64_t, uint64_t>> bands() const {
    std::vector<std::pair<uint64_t, uint64_t>> out;
    for (uint32_t b = 0; b < kBuckets / kSub; ++b) {
      uint64_t n = 0;
      for (uint32_t s = 0; s < kSub; ++s) n += counts_[b * kSub + s];
      if (n) out.emplace_back(upper(b * kSub + kSub - 1), n);
    }
    return out;
  }

 private:
  // Values below 32 ns have a bucket each; above, the top 5 bits below the
  // leading one pick the bucket within its power of two.
  static uint32_t index(uint64_t v) {
    if (v < kSub) return static_cast<uint32_t>(v);
    const uint32_t msb = 63 - static_cast<uint32_t>(std::countl_zero(v));
    const uint32_t shift = msb - kSubBits;
    return (shift + 1) * kSub + static_cast<uint32_t>((v >> shift) & (kSub - 1));
  }
  static uint64_t upper(uint32_t i) {
    if (i < kSub) return i;
    const uint32_t shift = i / kSub - 1;
    const uint64_t base = (uint64_t{kSub} + (i % kSub)) << shift;
    return base + ((uint64_t{1} << shift) - 1);
  }

  std::array<uint64_t, kBuckets> counts_{};
  uint64_t count_ = 0, max_ = 0, sum_ = 0;
};

}  // namespace lanecast::apps
