// A fixed-capacity FIFO of segment indices: what a node still owes one peer.
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

namespace lanecast::engine {

class SegmentFifo {
 public:
  explicit SegmentFifo(uint32_t capacity = 1)
      : ring_(std::bit_ceil(capacity < 1 ? 1u : capacity)), mask_(static_cast<uint32_t>(ring_.size()) - 1) {}
  bool empty() const { return head_ == tail_; }
  bool full() const { return tail_ - head_ == ring_.size(); }
  uint32_t size() const { return tail_ - head_; }
  bool push(uint32_t v) {
    if (full()) return false;
    ring_[tail_++ & mask_] = v;
    return true;
  }
  uint32_t front() const { return ring_[head_ & mask_]; }
  void pop() { ++head_; }
  void clear() { head_ = tail_ = 0; }

 private:
  std::vector<uint32_t> ring_;
  uint32_t mask_;
  uint32_t head_ = 0;
  uint32_t tail_ = 0;
};

}  // namespace lanecast::engine
