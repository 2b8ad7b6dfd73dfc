#include "algos/linear.h"

#include "algos/bitmap.h"

namespace lanecast::algos {
namespace {

class LinearMachine final : public Machine {
 public:
  LinearMachine(const Plan& plan, Rank me, std::pmr::memory_resource* mem)
      : nodes_(plan.nodes()), me_(me), root_(plan.root()), segments_(plan.segments()),
        have_(me == plan.root() ? 0 : plan.segments(), mem) {}

  void start(Actions& out) override {
    started_ = true;
    if (me_ != root_) return;
    held_ = segments_;
    for (SegmentIndex seg = 0; seg < segments_; ++seg)
      for (Rank r = 0; r < nodes_; ++r)
        if (r != me_) out.send(r, seg, 0);
  }

  void on_segment(SegmentIndex seg, Rank, Lane, Actions& out) override {
    if (me_ == root_ || seg >= segments_ || !have_.test_and_set(seg)) return;
    ++held_;
    out.deliver(seg);
  }

  bool done() const override { return started_ && held_ == segments_; }

 private:
  uint32_t nodes_;
  Rank me_, root_;
  uint32_t segments_;
  bool started_ = false;
  uint32_t held_ = 0;
  Bitmap have_;
};

}  // namespace

std::unique_ptr<Machine> make_linear(const Plan& plan, Rank me) {
  return make_on_heap<LinearMachine>(plan, me);
}

MachinePtr make_linear(const Plan& plan, Rank me, MachineArena& arena) {
  return arena.make<LinearMachine>(plan, me);
}

// The machine, and the have-bitmap of a receiver (the root has none).
size_t linear_arena_bytes(uint32_t nodes, uint32_t max_segments) {
  return arena_block(sizeof(LinearMachine)) + (nodes > 1 ? arena_block(Bitmap::bytes_for(max_segments)) : 0);
}

}  // namespace lanecast::algos
