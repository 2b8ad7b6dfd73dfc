#include "algos/chain.h"

#include "algos/arena.h"
#include "algos/pipeline.h"
#include "algos/topology/chain.h"

namespace lanecast::algos {
namespace {

PipeShape chain_shape(const Plan& plan, Rank me) {
  PipeShape shape;
  const Rank next = topology::chain_successor(plan.to_virtual(me), plan.nodes());
  if (next != kNoRank) shape.add_child(0, plan.to_real(next));
  return shape;
}

}  // namespace

std::unique_ptr<Machine> make_chain(const Plan& plan, Rank me) {
  return make_on_heap<PipelineMachine>(plan, me, chain_shape(plan, me));
}

MachinePtr make_chain(const Plan& plan, Rank me, MachineArena& arena) {
  return arena.make<PipelineMachine>(plan, me, chain_shape(plan, me));
}

}  // namespace lanecast::algos
