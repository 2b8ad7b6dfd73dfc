#include "algos/hypercube.h"

#include <bit>
#include <stdexcept>

#include "algos/bitmap.h"
#include "algos/topology/hypercube.h"

namespace lanecast::algos {
namespace {

class HypercubeMachine final : public Machine {
 public:
  HypercubeMachine(const Plan& plan, Rank me, std::span<const Rank> order, std::pmr::memory_resource* mem)
      : m_(plan.segments()), root_(me == plan.root()), have_(root_ ? 0 : m_, mem) {
    const uint32_t p = plan.nodes();
    if (!order.empty()) {
      if (order.size() != p) throw std::invalid_argument("hypercube: the order must list every rank");
      Bitmap seen(p, mem);
      for (Rank r : order)
        if (r >= p || !seen.test_and_set(r)) throw std::invalid_argument("hypercube: the order is not a permutation");
    }
    auto rank_at = [&](uint32_t pos) { return order.empty() ? pos : order[pos]; };
    auto pos_of = [&](Rank r) {
      uint32_t pos = 0;
      while (rank_at(pos) != r) ++pos;
      return pos;
    };
    const uint32_t root_pos = pos_of(plan.root()), my_pos = pos_of(me);
    const bool pow2 = std::has_single_bit(p);
    const Rank id = pow2 ? my_pos ^ root_pos : (my_pos + p - root_pos) % p;
    auto rank_of_id = [&](Rank v) { return rank_at(pow2 ? v ^ root_pos : (v + root_pos) % p); };
    topology::HypercubeChildren kids{};
    child_count_ = topology::hypercube_children(id, p, kids);
    for (uint32_t i = 0; i < child_count_; ++i) children_[i] = rank_of_id(kids[i]);
  }

  void start(Actions& out) override {
    started_ = true;
    if (!root_) return;
    held_ = m_;
    forward_all(out);
  }

  void on_segment(SegmentIndex seg, Rank, Lane, Actions& out) override {
    if (root_ || seg >= m_ || !have_.test_and_set(seg)) return;
    ++held_;
    out.deliver(seg);
    if (held_ == m_) forward_all(out);
  }

  bool done() const override { return started_ && held_ == m_; }

 private:
  void forward_all(Actions& out) const {
    for (uint32_t i = 0; i < child_count_; ++i)
      for (SegmentIndex seg = 0; seg < m_; ++seg) out.send(children_[i], seg, 0);
  }

  uint32_t m_;
  bool root_;
  uint32_t child_count_ = 0;
  topology::HypercubeChildren children_{};  // real ranks, in step order
  bool started_ = false;
  uint32_t held_ = 0;
  Bitmap have_;
};

}  // namespace

std::unique_ptr<Machine> make_hypercube(const Plan& plan, Rank me, std::span<const Rank> order) {
  return make_on_heap<HypercubeMachine>(plan, me, order);
}

std::unique_ptr<Machine> make_hypercube(const Plan& plan, Rank me) {
  return make_hypercube(plan, me, {});
}

MachinePtr make_hypercube(const Plan& plan, Rank me, std::span<const Rank> order, MachineArena& arena) {
  return arena.make<HypercubeMachine>(plan, me, order);
}

MachinePtr make_hypercube(const Plan& plan, Rank me, MachineArena& arena) {
  return make_hypercube(plan, me, {}, arena);
}

// The machine, the have-bitmap of a receiver (the root has none), and the
// order check's bitmap, which stays in the arena until the machine goes.
size_t hypercube_arena_bytes(uint32_t nodes, uint32_t max_segments, bool with_order) {
  return arena_block(sizeof(HypercubeMachine)) +
         (nodes > 1 ? arena_block(Bitmap::bytes_for(max_segments)) : 0) +
         (with_order ? arena_block(Bitmap::bytes_for(nodes)) : 0);
}

}  // namespace lanecast::algos
