// Where a FaultPort keeps frames, per lane and way: frames ready to leave (a
// FIFO), frames waiting for their time (a min-heap on the time, ties in
// arrival order), and frames set aside to be overtaken (a short list). Each
// is sized once, at construction: nothing here allocates on the datapath.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

struct rte_mbuf;

namespace lanecast::drivers::fault {

class FrameRing {
 public:
  explicit FrameRing(uint32_t capacity) : slots_(capacity) {}
  uint32_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  void push(rte_mbuf* m) {  // the caller checked the room
    uint32_t tail = head_ + count_;
    if (tail >= slots_.size()) tail -= static_cast<uint32_t>(slots_.size());
    slots_[tail] = m;
    ++count_;
  }
  rte_mbuf* front() const { return slots_[head_]; }
  // The oldest frames, as one contiguous run (the rest follows at the start).
  std::pair<rte_mbuf**, uint32_t> run() {
    const uint32_t n = std::min<uint32_t>(count_, static_cast<uint32_t>(slots_.size()) - head_);
    return {slots_.data() + head_, n};
  }
  void pop(uint32_t n) {
    head_ += n;
    if (head_ >= slots_.size()) head_ -= static_cast<uint32_t>(slots_.size());
    count_ -= n;
  }

 private:
  std::vector<rte_mbuf*> slots_;
  uint32_t head_ = 0, count_ = 0;
};

class DueHeap {
 public:
  struct Entry {
    uint64_t due_ns;
    uint64_t order;  // arrival: frames due together leave as they came
    rte_mbuf* frame;
  };
  explicit DueHeap(uint32_t capacity) { heap_.reserve(capacity); }
  uint32_t size() const { return static_cast<uint32_t>(heap_.size()); }
  bool empty() const { return heap_.empty(); }
  const Entry& top() const { return heap_.front(); }
  void push(uint64_t due_ns, rte_mbuf* m) {  // the caller checked the room: no reallocation
    heap_.push_back(Entry{due_ns, next_order_++, m});
    for (size_t i = heap_.size() - 1; i > 0;) {
      const size_t parent = (i - 1) / 2;
      if (!before(heap_[i], heap_[parent])) break;
      std::swap(heap_[i], heap_[parent]);
      i = parent;
    }
  }
  rte_mbuf* pop() {
    rte_mbuf* m = heap_.front().frame;
    heap_.front() = heap_.back();
    heap_.pop_back();
    for (size_t i = 0;;) {
      const size_t l = 2 * i + 1, r = l + 1;
      size_t least = i;
      if (l < heap_.size() && before(heap_[l], heap_[least])) least = l;
      if (r < heap_.size() && before(heap_[r], heap_[least])) least = r;
      if (least == i) break;
      std::swap(heap_[i], heap_[least]);
      i = least;
    }
    return m;
  }
  template <typename F>
  void for_each(F&& f) const {
    for (const Entry& e : heap_) f(e.frame);
  }

 private:
  static bool before(const Entry& a, const Entry& b) {
    return a.due_ns != b.due_ns ? a.due_ns < b.due_ns : a.order < b.order;
  }
  std::vector<Entry> heap_;
  uint64_t next_order_ = 0;
};

// Frames set aside, in the order they were: each waits for `left` more
// frames of its link, or until `deadline_ns`.
class AsideList {
 public:
  struct Entry {
    rte_mbuf* frame;
    uint32_t link;
    uint32_t left;
    uint64_t deadline_ns;
    uint64_t hold_ns;  // its delay and jitter, applied once it goes on
  };
  explicit AsideList(uint32_t capacity) { list_.reserve(capacity); }
  uint32_t size() const { return static_cast<uint32_t>(list_.size()); }
  bool empty() const { return list_.empty(); }
  void push(const Entry& e) { list_.push_back(e); }  // the caller checked the room
  uint64_t earliest_deadline() const {
    uint64_t at = UINT64_MAX;
    for (const Entry& e : list_) at = std::min(at, e.deadline_ns);
    return at;
  }
  // Takes out, in order, the entries `release` says go on (it may count
  // them down first), and hands each to `go`.
  template <typename Release, typename Go>
  void take(Release&& release, Go&& go) {
    size_t keep = 0;
    for (size_t i = 0; i < list_.size(); ++i) {
      if (release(list_[i])) go(list_[i]);
      else list_[keep++] = list_[i];
    }
    list_.resize(keep);
  }
  template <typename F>
  void for_each(F&& f) const {
    for (const Entry& e : list_) f(e.frame);
  }

 private:
  std::vector<Entry> list_;
};

}  // namespace lanecast::drivers::fault
