#include "algos/pipeline.h"

namespace lanecast::algos {

PipelineMachine::PipelineMachine(const Plan& plan, Rank me, const PipeShape& shape)
    : shape_(shape), segments_(plan.segments()), root_(me == plan.root()), have_(plan.segments()) {}

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
  const uint32_t cls = seg % shape_.classes;
  for (uint32_t i = 0; i < shape_.child_count[cls]; ++i) out.send(shape_.children[cls][i], seg, 0);
}

}  // namespace lanecast::algos
