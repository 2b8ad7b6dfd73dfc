#include "algos/multilane.h"

#include <stdexcept>

#include "algos/bitmap.h"

namespace lanecast::algos {
namespace {

class MultilaneMachine final : public Machine {
 public:
  MultilaneMachine(const Plan& plan, Rank me, const topology::MultilanePlace& place,
                   std::pmr::memory_resource* mem)
      : place_(place),
        m_(plan.segments()),
        split_((plan.segments() + 1) / 2),
        root_(me == plan.root()),
        have_(root_ ? 0 : m_, mem) {
    if (plan.lanes() < 2)
      for (auto& lanes : place_.lane) lanes = {0, 0};
  }
  // Builds the group's layout from mem (a temporary: only me's place is kept).
  MultilaneMachine(const Plan& plan, Rank me, std::span<const uint32_t> site_of_rank,
                   std::pmr::memory_resource* mem)
      : MultilaneMachine(plan, me, topology::MultilaneLayout(plan.nodes(), plan.root(), site_of_rank, mem).place(me),
                         mem) {}

  void start(Actions& out) override {
    started_ = true;
    if (!root_) return;
    held_ = m_;
    // Both halves at once: A[k] on one lane, B[k] on the other.
    for (SegmentIndex k = 0; k < split_; ++k) {
      forward(k, out);
      if (split_ + k < m_) forward(split_ + k, out);
    }
  }

  void on_segment(SegmentIndex seg, Rank, Lane, Actions& out) override {
    if (root_ || seg >= m_ || !have_.test_and_set(seg)) return;  // a copy we hold
    ++held_;
    out.deliver(seg);
    forward(seg, out);
  }

  bool done() const override { return started_ && held_ == m_; }

 private:
  void forward(SegmentIndex seg, Actions& out) const {
    const uint32_t h = seg < split_ ? 0 : 1;
    for (uint32_t i = 0; i < place_.count[h]; ++i) out.send(place_.to[h][i], seg, place_.lane[h][i]);
  }

  topology::MultilanePlace place_;
  uint32_t m_;
  uint32_t split_;  // first segment of half B
  bool root_;
  // Cursor: started, how many segments held, which ones.
  bool started_ = false;
  uint32_t held_ = 0;
  Bitmap have_;
};

void check_layout(const Plan& plan, const topology::MultilaneLayout& layout) {
  if (layout.nodes() != plan.nodes() || layout.root() != plan.root())
    throw std::invalid_argument("multilane: the layout was built for another group or root");
}

}  // namespace

std::unique_ptr<Machine> make_multilane(const Plan& plan, Rank me,
                                        const topology::MultilaneLayout& layout) {
  check_layout(plan, layout);
  return make_on_heap<MultilaneMachine>(plan, me, layout.place(me));
}

std::unique_ptr<Machine> make_multilane(const Plan& plan, Rank me,
                                        std::span<const uint32_t> site_of_rank) {
  return make_on_heap<MultilaneMachine>(plan, me, site_of_rank);
}

std::unique_ptr<Machine> make_multilane(const Plan& plan, Rank me) {
  return make_multilane(plan, me, std::span<const uint32_t>{});
}

MachinePtr make_multilane(const Plan& plan, Rank me, std::span<const uint32_t> site_of_rank,
                          MachineArena& arena) {
  return arena.make<MultilaneMachine>(plan, me, site_of_rank);
}

MachinePtr make_multilane(const Plan& plan, Rank me, const topology::MultilaneLayout& layout,
                          MachineArena& arena) {
  check_layout(plan, layout);
  return arena.make<MultilaneMachine>(plan, me, layout.place(me));
}

MachinePtr make_multilane(const Plan& plan, Rank me, MachineArena& arena) {
  return make_multilane(plan, me, std::span<const uint32_t>{}, arena);
}

// The machine, the have-bitmap of a receiver (the root has none), and the
// layout's tables, which stay in the arena until the machine goes.
size_t multilane_arena_bytes(uint32_t nodes, uint32_t max_segments, bool with_sites) {
  size_t bytes = arena_block(sizeof(MultilaneMachine));
  if (nodes > 1) bytes += arena_block(Bitmap::bytes_for(max_segments));
  for (size_t request : topology::MultilaneLayout::resource_requests(nodes, with_sites))
    bytes += arena_block(request);
  return bytes;
}

}  // namespace lanecast::algos
