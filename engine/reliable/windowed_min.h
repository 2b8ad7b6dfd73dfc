// The least of a series of samples over the last one to two windows of
// time: two minima, the older dropped when a window ends, so a value that
// rose for good (a longer path, a receiver's clock that drifted) is learned
// within two windows, while one low sample is kept at least a window.
// A rate controller's base RTT and a channel's base one-way delay.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

namespace lanecast::engine::reliable {

template <typename T>
class WindowedMin {
 public:
  static constexpr T kNone = std::numeric_limits<T>::max();

  explicit WindowedMin(uint64_t window_ns) : window_ns_(window_ns) {}

  // Notes a sample taken at now_ns; returns the least now.
  T note(T value, uint64_t now_ns) {
    if (now_ns >= window_end_ns_) {
      old_ = new_;
      new_ = kNone;
      window_end_ns_ = now_ns + window_ns_;
    }
    new_ = std::min(new_, value);
    least_ = std::min(old_, new_);
    return least_;
  }
  // kNone before the first sample.
  T least() const { return least_; }

 private:
  uint64_t window_ns_;
  uint64_t window_end_ns_ = 0;
  T old_ = kNone, new_ = kNone, least_ = kNone;
};

}  // namespace lanecast::engine::reliable
