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
    Arrive,   // a frame's first bit reaches the switch (bounded backplane only):
              //   a = src, b = dst, c = segment
    Deliver,  // the head frame of an rx port is in its receiver's memory:
              //   a = rx port, b = the port's version when scheduled (stale if changed)
    TxFree,   // a round-robin tx port finished a frame: a = tx port
    Refill,   // a FIFO tx port's wire runs low: put more of its backlog on it; a = tx port
  };
  Picos time;
  uint64_t seq;  // creation order: the tie-break that makes runs deterministic
  uint32_t a;
  uint32_t b;
  uint32_t c;
  Lane lane;
  Kind kind;
};
static_assert(sizeof(Event) == 32);

class EventQueue {
 public:
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  void reserve(size_t n) { heap_.reserve(n); }

  void push(Picos time, Event::Kind kind, uint32_t a, uint32_t b, uint32_t c, Lane lane) {
    Event e{time, next_seq_++, a, b, c, lane, kind};
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

  // The earliest event. Precondition: !empty().
  const Event& top() const { return heap_.front(); }

  // Removes the earliest event.
  void pop() {
    const Event last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) place_from_root(last);
  }

  // Removes the earliest event and adds one: a single sift instead of two.
  void replace_top(Picos time, Event::Kind kind, uint32_t a, uint32_t b, uint32_t c, Lane lane) {
    place_from_root(Event{time, next_seq_++, a, b, c, lane, kind});
  }

 private:
  // Bottom-up sift (Wegener): walk the hole at the root down to a leaf along the
  // smaller children, one comparison per level, then sift `e` up from there.
  // New events are usually later than most queued ones, so the way up is short.
  void place_from_root(const Event& e) {
    const size_t n = heap_.size();
    size_t i = 0;
    for (;;) {
      size_t c = 2 * i + 1;
      if (c >= n) break;
      c += (c + 1 < n) & before(heap_[c + 1], heap_[c]);
      heap_[i] = heap_[c];
      i = c;
    }
    while (i > 0) {
      const size_t parent = (i - 1) / 2;
      if (!before(e, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
  }

  // Branch-free: lock-step pipelines make equal times common, and a branch on
  // the tie mispredicts half the time.
  static bool before(const Event& a, const Event& b) {
    return (a.time < b.time) | ((a.time == b.time) & (a.seq < b.seq));
  }

  std::vector<Event> heap_;
  uint64_t next_seq_ = 0;
};

}  // namespace lanecast::algos::sim
