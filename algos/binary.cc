#include "algos/binary.h"

#include "algos/pipeline.h"
#include "algos/topology/binary.h"

namespace lanecast::algos {

std::unique_ptr<Machine> make_binary(const Plan& plan, Rank me) {
  PipeShape shape;
  const Rank v = plan.to_virtual(me);
  for (Rank c : {topology::heap_left(v, plan.nodes()), topology::heap_right(v, plan.nodes())})
    if (c != kNoRank) shape.add_child(0, plan.to_real(c));
  return std::make_unique<PipelineMachine>(plan, me, shape);
}

}  // namespace lanecast::algos
