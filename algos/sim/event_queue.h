// The simulator's event queues: binary min-heaps on (time, creation order) over
// amortised vectors; nothing is allocated per event once the vectors have grown
// to the run's high-water mark. EventQueue holds 32-byte event descriptors;
// KeyedQueue holds at most one entry per key (an rx port's next delivery) and
// moves it in place when its time changes.
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

  // Creation order shared with a KeyedQueue, so that ties between the two are
  // broken the same way every run.
  uint64_t next_seq() { return next_seq_++; }

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

// One entry per key 0..keys-1 at most, ordered by (time, seq); set() inserts or
// moves a key's entry (decrease- or increase-key) instead of leaving stale copies.
class KeyedQueue {
 public:
  explicit KeyedQueue(uint32_t keys = 0) : pos_(keys, kAbsent) {}

  bool empty() const { return heap_.empty(); }
  uint32_t top_key() const { return heap_.front().key; }
  Picos top_time() const { return heap_.front().time; }
  uint64_t top_seq() const { return heap_.front().seq; }

  void set(uint32_t key, Picos time, uint64_t seq) {
    const Entry e{time, seq, key};
    uint32_t i = pos_[key];
    if (i == kAbsent) {
      i = static_cast<uint32_t>(heap_.size());
      heap_.push_back(e);
      up(i, e);
    } else if (before(e, heap_[i])) {
      up(i, e);
    } else if (i == 0) {
      down_bottom_up(e);  // the usual case: the port just delivered moves back
    } else {
      down(i, e);
    }
  }

  void pop() {
    pos_[heap_.front().key] = kAbsent;
    const Entry last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) down_bottom_up(last);
  }

 private:
  static constexpr uint32_t kAbsent = ~uint32_t{0};
  struct Entry {
    Picos time;
    uint64_t seq;
    uint32_t key;
  };
  static bool before(const Entry& a, const Entry& b) {
    return (a.time < b.time) | ((a.time == b.time) & (a.seq < b.seq));
  }
  void place(uint32_t i, const Entry& e) {
    heap_[i] = e;
    pos_[e.key] = i;
  }
  void up(uint32_t i, const Entry& e) {
    while (i > 0) {
      const uint32_t parent = (i - 1) / 2;
      if (!before(e, heap_[parent])) break;
      place(i, heap_[parent]);
      i = parent;
    }
    place(i, e);
  }
  void down(uint32_t i, const Entry& e) {
    const uint32_t n = static_cast<uint32_t>(heap_.size());
    for (;;) {
      uint32_t c = 2 * i + 1;
      if (c >= n) break;
      c += (c + 1 < n) & before(heap_[c + 1], heap_[c]);
      if (!before(heap_[c], e)) break;
      place(i, heap_[c]);
      i = c;
    }
    place(i, e);
  }
  // Root replaced by `e`: walk the hole to a leaf along the smaller children,
  // then sift `e` up from there (one comparison per level on the way down).
  void down_bottom_up(const Entry& e) {
    const uint32_t n = static_cast<uint32_t>(heap_.size());
    uint32_t i = 0;
    for (;;) {
      uint32_t c = 2 * i + 1;
      if (c >= n) break;
      c += (c + 1 < n) & before(heap_[c + 1], heap_[c]);
      place(i, heap_[c]);
      i = c;
    }
    up(i, e);
  }

  std::vector<Entry> heap_;
  std::vector<uint32_t> pos_;
};

}  // namespace lanecast::algos::sim
