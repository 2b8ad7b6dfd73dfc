// Tiny machines that exercise the simulator independently of algos/: their
// timings have exact closed forms on the model, so they pin the model down.
// Not algorithms of the product (those live in algos/ and are registered there).
#pragma once

#include <memory>
#include <vector>

#include "algos/machine.h"
#include "algos/plan.h"

namespace lanecast::algos::sim::toy {

// Pipelined chain: virtual rank v forwards every segment to v+1 on arrival.
class Chain final : public Machine {
 public:
  Chain(const Plan& plan, Rank me) : plan_(plan), v_(plan.to_virtual(me)) {}
  void start(Actions& out) override {
    if (v_ != 0) return;
    for (SegmentIndex s = 0; s < plan_.segments(); ++s) forward(s, out);
  }
  void on_segment(SegmentIndex seg, Rank, Lane, Actions& out) override {
    out.deliver(seg);
    ++held_;
    forward(seg, out);
  }
  bool done() const override { return v_ == 0 || held_ == plan_.segments(); }

 private:
  void forward(SegmentIndex s, Actions& out) {
    if (v_ + 1 < plan_.nodes()) out.send(plan_.to_real(v_ + 1), s, static_cast<Lane>(s % plan_.lanes()));
  }
  const Plan& plan_;
  Rank v_;
  uint32_t held_ = 0;
};

// The root sends the whole message to every other node: receiver by receiver
// (by_receiver) or segment by segment.
class Linear final : public Machine {
 public:
  Linear(const Plan& plan, Rank me, bool by_receiver) : plan_(plan), me_(me), by_receiver_(by_receiver) {}
  void start(Actions& out) override {
    if (me_ != plan_.root()) return;
    const uint32_t p = plan_.nodes(), m = plan_.segments();
    if (by_receiver_) {
      for (Rank v = 1; v < p; ++v)
        for (SegmentIndex s = 0; s < m; ++s) out.send(plan_.to_real(v), s, 0);
    } else {
      for (SegmentIndex s = 0; s < m; ++s)
        for (Rank v = 1; v < p; ++v) out.send(plan_.to_real(v), s, 0);
    }
  }
  void on_segment(SegmentIndex seg, Rank, Lane, Actions& out) override {
    out.deliver(seg);
    ++held_;
  }
  bool done() const override { return me_ == plan_.root() || held_ == plan_.segments(); }

 private:
  const Plan& plan_;
  Rank me_;
  bool by_receiver_;
  uint32_t held_ = 0;
};

// Store-and-forward binomial tree: a node that holds the whole message sends it
// to its children, largest subtree first (MPI's binomial).
class Binomial final : public Machine {
 public:
  Binomial(const Plan& plan, Rank me) : plan_(plan), v_(plan.to_virtual(me)) {}
  void start(Actions& out) override {
    if (v_ == 0) send_all(out);
  }
  void on_segment(SegmentIndex seg, Rank, Lane, Actions& out) override {
    out.deliver(seg);
    if (++held_ == plan_.segments()) send_all(out);
  }
  bool done() const override { return v_ == 0 || held_ == plan_.segments(); }

 private:
  void send_all(Actions& out) {
    // Children: v + 2^k for every 2^k > v. Child v + 2^k leads every rank whose
    // low bits match it, so the nearest child has the largest subtree: serve it first.
    uint64_t mask = 1;
    while (mask <= v_) mask <<= 1;
    for (; v_ + mask < plan_.nodes(); mask <<= 1)
      for (SegmentIndex s = 0; s < plan_.segments(); ++s)
        out.send(plan_.to_real(static_cast<Rank>(v_ + mask)), s, 0);
  }
  const Plan& plan_;
  Rank v_;
  uint32_t held_ = 0;
};

// Sends a segment it does not hold: the simulator must refuse.
class Liar final : public Machine {
 public:
  Liar(const Plan& plan, Rank me) : plan_(plan), me_(me) {}
  void start(Actions& out) override {
    if (me_ == 1 && plan_.segments() > 0) out.send(0, 0, 0);
  }
  void on_segment(SegmentIndex, Rank, Lane, Actions&) override {}
  bool done() const override { return true; }

 private:
  const Plan& plan_;
  Rank me_;
};

// The root sends every segment to every rank; a receiver delivers what it
// gets, except that it delivers segment 0 in place of segment `swap` (a
// duplicate and a miss, same count), or segment 0 once more at the end
// (`extra`). The simulator must refuse both.
class Miscounter final : public Machine {
 public:
  Miscounter(const Plan& plan, Rank me, SegmentIndex swap, bool extra)
      : plan_(plan), me_(me), swap_(swap), extra_(extra) {}
  void start(Actions& out) override {
    if (me_ != 0) return;
    for (SegmentIndex s = 0; s < plan_.segments(); ++s)
      for (Rank r = 1; r < plan_.nodes(); ++r) out.send(r, s, 0);
  }
  void on_segment(SegmentIndex seg, Rank, Lane, Actions& out) override {
    ++held_;
    out.deliver(seg == swap_ ? 0 : seg);
    if (extra_ && held_ == plan_.segments()) out.deliver(0);
  }
  bool done() const override { return me_ == 0 || held_ == plan_.segments(); }

 private:
  const Plan& plan_;
  Rank me_;
  SegmentIndex swap_;
  bool extra_;
  uint32_t held_ = 0;
};

// Emits a fixed list of sends at start and nothing else; for timing tests run
// with validation off (non-roots send what they do not hold).
class Script final : public Machine {
 public:
  struct Send { Rank to; SegmentIndex seg; Lane lane; };
  explicit Script(std::vector<Send> sends) : sends_(std::move(sends)) {}
  void start(Actions& out) override {
    for (const auto& s : sends_) out.send(s.to, s.seg, s.lane);
  }
  void on_segment(SegmentIndex, Rank, Lane, Actions&) override {}
  bool done() const override { return true; }

 private:
  std::vector<Send> sends_;
};

}  // namespace lanecast::algos::sim::toy
