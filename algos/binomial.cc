#include "algos/binomial.h"

#include "algos/bitmap.h"
#include "algos/topology/binomial.h"

namespace lanecast::algos {
namespace {

class BinomialMachine final : public Machine {
 public:
  BinomialMachine(const Plan& plan, Rank me, std::pmr::memory_resource* mem)
      : segments_(plan.segments()), root_(me == plan.root()),
        have_(root_ ? 0 : plan.segments(), mem) {
    topology::BinomialChildren kids{};
    child_count_ = topology::binomial_children(plan.to_virtual(me), plan.nodes(), kids);
    for (uint32_t i = 0; i < child_count_; ++i) children_[i] = plan.to_real(kids[i]);
  }

  void start(Actions& out) override {
    started_ = true;
    if (!root_) return;
    held_ = segments_;
    forward_all(out);
  }

  void on_segment(SegmentIndex seg, Rank, Lane, Actions& out) override {
    if (root_ || seg >= segments_ || !have_.test_and_set(seg)) return;
    ++held_;
    out.deliver(seg);
    if (held_ == segments_) forward_all(out);
  }

  bool done() const override { return started_ && held_ == segments_; }

 private:
  // The whole message to each child, largest subtree first.
  void forward_all(Actions& out) const {
    for (uint32_t i = 0; i < child_count_; ++i)
      for (SegmentIndex seg = 0; seg < segments_; ++seg) out.send(children_[i], seg, 0);
  }

  uint32_t segments_;
  bool root_;
  uint32_t child_count_ = 0;
  topology::BinomialChildren children_{};  // real ranks, in serving order
  bool started_ = false;
  uint32_t held_ = 0;
  Bitmap have_;
};

}  // namespace

std::unique_ptr<Machine> make_binomial(const Plan& plan, Rank me) {
  return make_on_heap<BinomialMachine>(plan, me);
}

MachinePtr make_binomial(const Plan& plan, Rank me, MachineArena& arena) {
  return arena.make<BinomialMachine>(plan, me);
}

// The machine, and the have-bitmap of a receiver (the root has none).
size_t binomial_arena_bytes(uint32_t nodes, uint32_t max_segments) {
  return arena_block(sizeof(BinomialMachine)) + (nodes > 1 ? arena_block(Bitmap::bytes_for(max_segments)) : 0);
}

}  // namespace lanecast::algos
