// The plans the algorithm and simulator tests build: p nodes, a root, a
// message in segments of the given size, one lane.
#pragma once

#include <cstdint>

#include "algos/plan.h"

namespace lanecast::algos::plans {

inline Plan plan_of(uint32_t nodes, Rank root, uint64_t bytes, uint32_t segment) {
  PlanParams p;
  p.nodes = nodes;
  p.root = root;
  p.message_bytes = bytes;
  p.segment_bytes = segment;
  return Plan(p);
}

}  // namespace lanecast::algos::plans
