#include "algos/chain.h"

#include "algos/pipeline.h"
#include "algos/topology/chain.h"

namespace lanecast::algos {

std::unique_ptr<Machine> make_chain(const Plan& plan, Rank me) {
  PipeShape shape;
  const Rank next = topology::chain_successor(plan.to_virtual(me), plan.nodes());
  if (next != kNoRank) shape.add_child(0, plan.to_real(next));
  return std::make_unique<PipelineMachine>(plan, me, shape);
}

}  // namespace lanecast::algos
