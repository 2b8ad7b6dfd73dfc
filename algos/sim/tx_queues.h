// Sends a machine has emitted that its tx port has not started yet, kept compact:
// a linear root emits (p-1) x segments sends at once, which must not become
// (p-1) x segments queue entries. Runs of sends with a constant stride in
// destination and in segment ("segment s to ranks 1, 2, 3, ...", or "segments
// 0, 1, 2, ... to rank r") are one entry each.
#pragma once

#include <cstdint>
#include <vector>

#include "algos/types.h"

namespace lanecast::algos::sim {

struct Send {
  Rank dst;
  SegmentIndex seg;
  Lane lane;
};

// Emission order, one queue per tx port.
class FifoBacklog {
 public:
  bool empty() const { return head_ == runs_.size(); }

  void push(const Send& s) {
    if (!empty()) {
      Run& last = runs_.back();
      if (last.lane == s.lane) {
        if (last.count == 1) {  // a second send fixes the stride
          last.ddst = int64_t{s.dst} - last.dst;
          last.dseg = int64_t{s.seg} - last.seg;
          last.count = 2;
          return;
        }
        if (int64_t{last.dst} + last.ddst * last.count == s.dst &&
            int64_t{last.seg} + last.dseg * last.count == s.seg) {
          ++last.count;
          return;
        }
      }
    }
    runs_.push_back(Run{s.dst, s.seg, 1, 0, 0, s.lane});
  }

  // Precondition: !empty().
  Send front() const {
    const Run& r = runs_[head_];
    return Send{r.dst, r.seg, r.lane};
  }

  // Precondition: !empty().
  Send pop() {
    Run& r = runs_[head_];
    const Send s{r.dst, r.seg, r.lane};
    r.dst = static_cast<Rank>(r.dst + r.ddst);
    r.seg = static_cast<SegmentIndex>(r.seg + r.dseg);
    if (--r.count == 0 && ++head_ == runs_.size()) {
      runs_.clear();
      head_ = 0;
    } else if (head_ >= 32 && 2 * head_ >= runs_.size()) {
      runs_.erase(runs_.begin(), runs_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
    return s;
  }

  bool refill_pending = false;  // a Refill event for this port is in the queue
  bool waiting = false;         // paused: its next frame's rx port is full

 private:
  struct Run {
    Rank dst;
    SegmentIndex seg;
    uint32_t count;
    int64_t ddst, dseg;
    Lane lane;
  };
  std::vector<Run> runs_;
  size_t head_ = 0;
};

// Round robin over destinations (the engine's pump_sends): per destination a
// queue of runs of consecutive segments on one lane.
class RrPort {
 public:
  bool empty() const { return active_.empty(); }

  void push(const Send& s) {
    Queue* q = nullptr;
    for (auto& x : active_)
      if (x.dst == s.dst) {
        q = &x;
        break;
      }
    if (q == nullptr) {
      // A new destination joins just before the one whose turn it is: it waits a full round.
      q = &*active_.insert(active_.begin() + static_cast<std::ptrdiff_t>(turn_), Queue{s.dst, {}, 0});
      if (active_.size() > 1) ++turn_;
    }
    if (q->head < q->runs.size() && q->runs.back().lane == s.lane &&
        q->runs.back().first + q->runs.back().count == s.seg) {
      ++q->runs.back().count;
    } else {
      q->runs.push_back({s.seg, 1, s.lane});
    }
  }

  // The next send in turn. Precondition: !empty().
  Send pop() {
    if (turn_ >= active_.size()) turn_ = 0;
    Queue& q = active_[turn_];
    Run& run = q.runs[q.head];
    const Send s{q.dst, run.first, run.lane};
    ++run.first;
    if (--run.count == 0) ++q.head;
    if (q.head == q.runs.size()) {
      active_.erase(active_.begin() + static_cast<std::ptrdiff_t>(turn_));
    } else {
      ++turn_;
    }
    return s;
  }

  bool busy = false;  // a frame is on the wire; a TxFree event will come

 private:
  struct Run {
    SegmentIndex first;
    uint32_t count;
    Lane lane;
  };
  struct Queue {
    Rank dst;
    std::vector<Run> runs;
    size_t head = 0;
  };
  std::vector<Queue> active_;  // destinations with something queued, in turn order
  size_t turn_ = 0;
};

}  // namespace lanecast::algos::sim
