// The running broadcast's multicasts not yet sent, oldest first: each is a
// segment to the group address on a lane or, where multicast is emulated,
// one datagram to each member in turn (next_rank says who is next, so a
// multicast cut short by a full lane resumes where it stopped). A machine
// multicasts each segment at most once (algos/machine.h): the ring is sized
// for that, and push() refuses beyond it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace lanecast::engine {

class MulticastQueue {
 public:
  struct Item {
    uint32_t segment;
    uint16_t lane;
    uint32_t next_rank;  // emulation: the next member to get its copy
  };

  explicit MulticastQueue(uint32_t capacity) : ring_(capacity == 0 ? 1 : capacity) {}

  bool empty() const { return count_ == 0; }
  size_t size() const { return count_; }
  // False when full (a machine that multicasts more than it may).
  bool push(uint32_t segment, uint16_t lane) {
    if (count_ == ring_.size()) return false;
    ring_[(head_ + count_++) % ring_.size()] = Item{segment, lane, 0};
    return true;
  }
  // Precondition: !empty().
  Item& front() { return ring_[head_]; }
  void pop() {
    head_ = (head_ + 1) % ring_.size();
    --count_;
  }
  void clear() { head_ = count_ = 0; }
  size_t bytes() const { return ring_.capacity() * sizeof(Item); }

 private:
  std::vector<Item> ring_;
  size_t head_ = 0, count_ = 0;
};

}  // namespace lanecast::engine
