// One generic segment pipeline over a tree shape (Open MPI's idea: chain,
// pipeline and binary tree are one loop over different trees). Every node
// forwards each segment to its children as soon as it holds it, in whatever
// order segments arrive; the root emits segment-major at start.
//
// A shape may carry several trees ("classes"): segment i travels in tree
// i % classes (two classes give Happe & Vinter's alternating bintree).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory_resource>

#include "algos/bitmap.h"
#include "algos/machine.h"

namespace lanecast::algos {

// One node's place in the pipeline: its children per class, as real ranks.
struct PipeShape {
  static constexpr uint32_t kMaxClasses = 2;
  static constexpr uint32_t kMaxChildren = 2;
  uint32_t classes = 1;
  std::array<uint32_t, kMaxClasses> child_count{};
  std::array<std::array<Rank, kMaxChildren>, kMaxClasses> children{};

  void add_child(uint32_t cls, Rank r) { children[cls][child_count[cls]++] = r; }
};

class PipelineMachine final : public Machine {
 public:
  // mem: where the have-bitmap's words come from.
  PipelineMachine(const Plan& plan, Rank me, const PipeShape& shape,
                  std::pmr::memory_resource* mem = std::pmr::get_default_resource());

  void start(Actions& out) override;
  void on_segment(SegmentIndex seg, Rank from, Lane lane, Actions& out) override;
  bool done() const override { return started_ && held_ == segments_; }

 private:
  void forward(SegmentIndex seg, Actions& out) const;
  void forward_to_each(uint32_t cls, SegmentIndex seg, Actions& out) const;  // two children or more

  PipeShape shape_;
  uint32_t segments_;
  bool root_;
  // Cursor: started, how many segments held, which ones.
  bool started_ = false;
  uint32_t held_ = 0;
  Bitmap have_;
};

// The arena bytes a PipelineMachine (chain, binary, bintree) needs at most for
// any root, any rank and any message of at most max_segments segments: the
// machine and its have-bitmap, which every rank has, the root included.
size_t pipeline_arena_bytes(uint32_t nodes, uint32_t max_segments);

}  // namespace lanecast::algos
