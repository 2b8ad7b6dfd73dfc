// The simulator's event queue: a binary min-heap on (time, creation order) over
// one amortised vector. Events are 32-byte descriptors; nothing is allocated per
// event once the vector has grown to the run's high-water mark.
#pragma once

#include <cstdint>
#include <vector>

#include "algos/sim/topology.h"
#include "algos/types.h"

namespace lanecast::algos::sim {

struct Event {
  enum Kind : uint8_t {
    Arrive,   // a frame's first bit reaches the receiver's switch port
    Deliver,  // a frame's last bit is in the receiver's memory
    TxFree,   // a tx port finished a frame (round-robin ports only)
  };
  Picos time;
  uint64_t seq;  // creation order: the tie-break that makes runs deterministic
  Rank src;
  Rank dst;
  SegmentIndex seg;
  Lane lane;
  Kind kind;
};
static_assert(sizeof(Event) == 32);

class EventQueue {
 public:
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  void reserve(size_t n) { heap_.reserve(n); }

  void push(Picos time, Event::Kind kind, Rank src, Rank dst, SegmentIndex seg, Lane lane) {
    Event e{time, next_seq_++, src, dst, seg, lane, kind};
    size_t i = heap_.size();
    heap_.push_back(e);
    while (i > 0) {  // sift the hole up
      const size_t parent = (i - 1) / 2;
      if (!before(e, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
  }

  // Removes and returns the earliest event. Precondition: !empty().
  Event pop() {
    const Event top = heap_.front();
    const Event last = heap_.back();
    heap_.pop_back();
    const size_t n = heap_.size();
    if (n > 0) {
      size_t i = 0;
      for (;;) {  // sift the hole down, then drop `last` into it
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && before(heap_[c + 1], heap_[c])) ++c;
        if (!before(heap_[c], last)) break;
        heap_[i] = heap_[c];
        i = c;
      }
      heap_[i] = last;
    }
    return top;
  }

 private:
  static bool before(const Event& a, const Event& b) {
    return a.time < b.time || (a.time == b.time && a.seq < b.seq);
  }

  std::vector<Event> heap_;
  uint64_t next_seq_ = 0;
};

}  // namespace lanecast::algos::sim
