// Shared by the arena suites: a plan of a few numbers, and a heap-held handle
// that lets the model executor (which owns std::unique_ptr<Machine>) run a
// machine that lives in a MachineArena.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

#include "algos/arena.h"
#include "algos/plan.h"

namespace lanecast::algos::testing {

inline Plan plan_of(uint32_t p, Rank root, uint64_t bytes, uint32_t segment_bytes, uint16_t lanes = 1) {
  PlanParams pp;
  pp.nodes = p;
  pp.root = root;
  pp.lanes = lanes;
  pp.message_bytes = bytes;
  pp.segment_bytes = segment_bytes;
  return Plan(pp);
}

// Forwards every event to an arena-made machine. Records the arena's use when
// built and counts, in *grew, a machine that took more arena bytes after its
// construction (it must not: machines allocate only while constructed).
class InArena final : public Machine {
 public:
  InArena(MachinePtr m, const MachineArena& arena, int* grew)
      : m_(std::move(m)), arena_(arena), used_(arena.used()), grew_(grew) {}
  ~InArena() override {
    if (arena_.used() != used_) ++*grew_;
  }
  void start(Actions& out) override { m_->start(out); }
  void on_segment(SegmentIndex seg, Rank from, Lane lane, Actions& out) override {
    m_->on_segment(seg, from, lane, out);
  }
  void on_timer(uint32_t tag, Actions& out) override { m_->on_timer(tag, out); }
  void on_signal(Rank from, uint32_t tag, Actions& out) override { m_->on_signal(from, tag, out); }
  bool done() const override { return m_->done(); }

 private:
  MachinePtr m_;
  const MachineArena& arena_;
  size_t used_;
  int* grew_;
};

}  // namespace lanecast::algos::testing
