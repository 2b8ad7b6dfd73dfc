// The plans the simulator tests run: p nodes, a root, a message, 1400-byte
// segments unless told, one lane.
#pragma once

#include <cstdint>

#include "algos/plan.h"

namespace lanecast::algos::sim::plans {

inline Plan plan_of(uint32_t nodes, Rank root, uint64_t bytes, uint32_t segment = 1400) {
  PlanParams p;
  p.nodes = nodes;
  p.root = root;
  p.message_bytes = bytes;
  p.segment_bytes = segment;
  return Plan(p);
}

}  // namespace lanecast::algos::sim::plans
