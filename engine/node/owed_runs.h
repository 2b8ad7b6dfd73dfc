// What a node still owes a peer on one lane: the segments its machine asked
// it to send, in the order asked, not yet sent - kept as runs.
//
// A full queue per peer would cost p x (segments of the largest message) per
// member: about 68 GiB over a group of 1024 at the default limit. But what
// machines owe comes in runs: a root owes a peer every segment (one run), a
// pipeline forwards segments as they come (a run that grows at its tail), a
// tree of alternating segments owes every other one (stride 2), symmetric's
// root hands segments out round robin (stride = receivers). So each (peer,
// lane) keeps a FIFO of runs {first, count, stride}, and a send that
// continues the tail run only bumps its count. The runs come from one pool per
// node sized when the group is created (owed_runs_for() in node.cc), so no
// term grows with peers x message size.
//
// Every item also carries its place in the order the machine asked for its
// sends (a stamp: 0, 1, 2, ... per broadcast), so the node can send in that
// order across peers - the order the simulator models - and not all of one
// peer's items before another's. A run holds items whose segments and stamps
// both advance by fixed strides: a pipeline forwarding each segment to two
// children owes each child segments s, s+1, ... at stamps t, t+2, ...
//
// A signal (a machine's payload-less control message) is a run of its own.
// A stream's batches (engine/stream/) are runs too, tagged with the stream's
// slot: they share the channel, its window and the machine's order with the
// broadcast running beside them, but a failed broadcast drops only its own.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace lanecast::engine {

inline constexpr uint16_t kNoStream = UINT16_MAX;

struct OwedItem {
  uint32_t value;  // segment index, a signal's tag, or a stream's batch (low 32 bits)
  bool signal;
  uint64_t stamp;  // its place in the machine's order
  uint16_t stream = kNoStream;  // the stream slot of a batch; kNoStream for the broadcast's items
  // The items after it in its run: value + stride, value + 2 stride, ...
  // `run` of them, this one included, may go now without passing an item
  // the machine owed another peer first (Channels::send_owed sets it).
  uint32_t stride = 0;
  uint32_t run = 1;
  bool is_stream() const { return stream != kNoStream; }
};

class RunPool {
 public:
  static constexpr uint32_t kNil = UINT32_MAX;
  struct Run {
    uint32_t first = 0;
    uint32_t count = 0;
    uint32_t stride = 0;  // 0 for a signal
    uint32_t next = kNil;
    uint64_t stamp = 0;   // the first item's
    uint32_t stamp_stride = 0;
    uint16_t stream = kNoStream;
  };

  explicit RunPool(uint32_t capacity) : runs_(capacity) {
    for (uint32_t i = 0; i < capacity; ++i) runs_[i].next = i + 1 < capacity ? i + 1 : kNil;
    free_ = capacity ? 0 : kNil;
  }
  Run& operator[](uint32_t i) { return runs_[i]; }
  const Run& operator[](uint32_t i) const { return runs_[i]; }
  // kNil when exhausted.
  uint32_t take() {
    const uint32_t i = free_;
    if (i != kNil) {
      free_ = runs_[i].next;
      runs_[i].next = kNil;
      ++in_use_;
    }
    return i;
  }
  // More runs (a stream opened: its share, engine/stream/streams.cc). The
  // control path only: runs are held by index, never by address, so the
  // storage may move.
  void grow(uint32_t extra) {
    const uint32_t old = capacity();
    runs_.resize(size_t{old} + extra);
    for (uint32_t i = old; i < old + extra; ++i) runs_[i].next = i + 1 < old + extra ? i + 1 : free_;
    if (extra > 0) free_ = old;
  }
  void give_back(uint32_t i) {
    runs_[i].next = free_;
    free_ = i;
    --in_use_;
  }
  uint32_t capacity() const { return static_cast<uint32_t>(runs_.size()); }
  uint32_t in_use() const { return in_use_; }
  size_t bytes() const { return runs_.size() * sizeof(Run); }

 private:
  std::vector<Run> runs_;
  uint32_t free_;
  uint32_t in_use_ = 0;
};

// One (peer, lane)'s FIFO of runs; the storage is the node's RunPool.
class OwedList {
 public:
  bool empty() const { return head_ == RunPool::kNil; }
  uint32_t size() const { return items_; }

  // Appends a segment owed at `stamp` (stamps grow); false when the pool is
  // exhausted.
  bool push(RunPool& pool, uint32_t seg, uint64_t stamp, uint16_t stream = kNoStream) {
    if (tail_ != RunPool::kNil && pool[tail_].stream == stream) {
      RunPool::Run& t = pool[tail_];
      if (t.stride != 0 && t.count >= 2 && seg == t.first + t.count * t.stride &&
          stamp == t.stamp + uint64_t{t.count} * t.stamp_stride) {
        ++t.count;
        ++items_;
        return true;
      }
      if (t.stride != 0 && t.count == 1 && seg > t.first && stamp > t.stamp &&
          stamp - t.stamp <= UINT32_MAX) {  // the second item sets both strides
        t.stride = seg - t.first;
        t.stamp_stride = static_cast<uint32_t>(stamp - t.stamp);
        ++t.count;
        ++items_;
        return true;
      }
    }
    return append(pool, RunPool::Run{seg, 1, 1, RunPool::kNil, stamp, 0, stream});
  }
  bool push_signal(RunPool& pool, uint32_t tag, uint64_t stamp) {
    return append(pool, RunPool::Run{tag, 1, 0, RunPool::kNil, stamp, 0});
  }

  // Precondition: !empty(). The first item, with `run` the items of its
  // run owed before stamp `before`.
  OwedItem front(const RunPool& pool, uint64_t before = 0) const {
    const RunPool::Run& h = pool[head_];
    uint32_t run = 1;
    if (h.count > 1 && h.stamp_stride != 0 && before > h.stamp)
      run = static_cast<uint32_t>(std::min<uint64_t>(h.count, (before - h.stamp - 1) / h.stamp_stride + 1));
    return OwedItem{h.first, h.stride == 0, h.stamp, h.stream, h.stride, run};
  }
  // Takes the first n items (at most the first run's).
  void pop(RunPool& pool, uint32_t n = 1) {
    RunPool::Run& h = pool[head_];
    items_ -= n;
    h.count -= n;
    if (h.count > 0) {
      h.first += n * h.stride;
      h.stamp += uint64_t{n} * h.stamp_stride;
      return;
    }
    const uint32_t next = h.next;
    pool.give_back(head_);
    head_ = next;
    if (head_ == RunPool::kNil) tail_ = RunPool::kNil;
  }
  // Drops the broadcast's items (a failed broadcast), keeping the streams'
  // in order. Returns how many items went.
  uint32_t clear_broadcast(RunPool& pool) {
    uint32_t gone = 0, prev = RunPool::kNil;
    for (uint32_t i = head_; i != RunPool::kNil;) {
      const uint32_t next = pool[i].next;
      if (pool[i].stream == kNoStream) {
        gone += pool[i].count;
        if (prev == RunPool::kNil) head_ = next;
        else pool[prev].next = next;
        if (tail_ == i) tail_ = prev;
        pool.give_back(i);
      } else {
        prev = i;
      }
      i = next;
    }
    items_ -= gone;
    return gone;
  }
  void clear(RunPool& pool) {
    while (head_ != RunPool::kNil) {
      const uint32_t next = pool[head_].next;
      pool.give_back(head_);
      head_ = next;
    }
    tail_ = RunPool::kNil;
    items_ = 0;
  }

 private:
  bool append(RunPool& pool, const RunPool::Run& r) {
    const uint32_t i = pool.take();
    if (i == RunPool::kNil) return false;
    pool[i] = r;
    if (tail_ == RunPool::kNil) head_ = i;
    else pool[tail_].next = i;
    tail_ = i;
    ++items_;
    return true;
  }

  uint32_t head_ = RunPool::kNil;
  uint32_t tail_ = RunPool::kNil;
  uint32_t items_ = 0;
};

}  // namespace lanecast::engine
