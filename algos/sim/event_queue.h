// The simulator's event queues: min-heaps on (time, creation order) over
// amortised vectors (EventQueue binary, KeyedQueue 4-ary); nothing is allocated per event once the vectors have grown
// to the run's high-water mark. EventQueue holds 32-byte event descriptors;
// KeyedQueue holds at most one entry per key (an rx port's next delivery) and
// moves it in place when its time changes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <new>
#include <stdexcept>
#include <vector>

#include "algos/sim/latency_map.h"
#include "algos/types.h"

namespace lanecast::algos::sim {

struct Event {
  enum Kind : uint8_t {
    Arrive,   // a frame's first bit reaches the switch (bounded backplane only):
              //   a = src, b = dst, c = segment
    TxFree,   // a round-robin tx port finished a frame: a = tx port
    Refill,   // a FIFO tx port's wire runs low: put more of its backlog on it; a = tx port
    Start,    // a rank enters the broadcast (process skew): a = rank
    Timer,    // a machine's timer fires: a = rank, b = tag
    Signal,   // a signal arrives: a = src, b = dst, c = tag
    Held,     // a reliable frame that arrived before its receiver's start reaches
              //   the machine: a = src, b = dst, c = segment
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
//
// A 4-ary heap of 16-byte entries whose sibling groups each fill one 64-byte
// cache line: at 4096 rx ports a binary heap of 24-byte entries walks 12
// levels touching a line each; this one walks 6. The key shares a word with the
// creation order (seq << kKeyBits | key), which keeps the order exact: seqs are
// unique, so comparing the packed word compares the seqs.
class KeyedQueue {
 public:
  static constexpr uint32_t kKeyBits = 24;  // up to 16 M keys; seq below 2^40

  explicit KeyedQueue(uint32_t keys = 0) : pos_(keys, kAbsent) {
    if (keys > (uint32_t{1} << kKeyBits)) throw std::length_error("KeyedQueue: too many keys");
    // Slot i lives at position i + kPad: children 4i+1..4i+4 then fill a line.
    heap_.resize(1);
  }

  bool empty() const { return n_ == 0; }
  uint32_t top_key() const { return static_cast<uint32_t>(at(0).order & kKeyMask); }
  Picos top_time() const { return at(0).time; }
  uint64_t top_seq() const { return at(0).order >> kKeyBits; }

  void set(uint32_t key, Picos time, uint64_t seq) {
    const Entry e{(seq << kKeyBits) | key, time};
    uint32_t i = pos_[key];
    if (i == kAbsent) {
      i = n_++;
      if (4 * heap_.size() < n_ + kPad) heap_.resize(heap_.size() * 2);
      up(i, e);
    } else if (before(e, at(i))) {
      up(i, e);
    } else {
      down(i, e);  // the usual case: the port just delivered moves back
    }
  }

  void pop() {
    pos_[top_key()] = kAbsent;
    const Entry last = at(--n_);
    if (n_ > 0) down(0, last);
  }

 private:
  static constexpr uint32_t kAbsent = ~uint32_t{0};
  static constexpr uint64_t kKeyMask = (uint64_t{1} << kKeyBits) - 1;
  static constexpr size_t kPad = 3;
  struct alignas(16) Entry {
    uint64_t order;  // seq << kKeyBits | key (low word of the sort key)
    Picos time;      // high word
  };
  static_assert(sizeof(Entry) == 16);
  // Cache-line storage (C++17 aligned new), so that a sibling group is one line.
  struct alignas(64) Line {
    Entry e[4];
  };

  // One 128-bit comparison (cmp/sbb): the compiler turns the choice of the
  // smallest child into conditional moves, where two 64-bit comparisons
  // became branches that mispredict on every level.
  __extension__ using Key = unsigned __int128;
  static Key key(const Entry& e) { return (Key{e.time} << 64) | e.order; }
  static bool before(const Entry& a, const Entry& b) { return key(a) < key(b); }
  Entry& at(uint32_t i) { return heap_[(i + kPad) / 4].e[(i + kPad) % 4]; }
  const Entry& at(uint32_t i) const { return heap_[(i + kPad) / 4].e[(i + kPad) % 4]; }
  void place(uint32_t i, const Entry& e) {
    at(i) = e;
    pos_[e.order & kKeyMask] = i;
  }
  void up(uint32_t i, const Entry& e) {
    while (i > 0) {
      const uint32_t parent = (i - 1) / 4;
      if (!before(e, at(parent))) break;
      place(i, at(parent));
      i = parent;
    }
    place(i, e);
  }
  void down(uint32_t i, const Entry& e) {
    for (;;) {
      const uint32_t first = 4 * i + 1;
      if (first >= n_) break;
      uint32_t c;
      if (first + 4 <= n_) {  // a full sibling group: a branch-free tournament
        const Key k0 = key(at(first)), k1 = key(at(first + 1)), k2 = key(at(first + 2)), k3 = key(at(first + 3));
        const uint32_t a = k1 < k0 ? first + 1 : first, b = k3 < k2 ? first + 3 : first + 2;
        const Key ka = k1 < k0 ? k1 : k0, kb = k3 < k2 ? k3 : k2;
        c = kb < ka ? b : a;
      } else {
        c = first;
        for (uint32_t j = first + 1; j < n_; ++j) c = before(at(j), at(c)) ? j : c;
      }
      if (!before(at(c), e)) break;
      place(i, at(c));
      i = c;
    }
    place(i, e);
  }

  std::vector<Line> heap_;
  std::vector<uint32_t> pos_;
  uint32_t n_ = 0;
};

}  // namespace lanecast::algos::sim
