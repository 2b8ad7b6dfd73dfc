#include "algos/binary.h"

#include "algos/arena.h"
#include "algos/pipeline.h"
#include "algos/topology/binary.h"

namespace lanecast::algos {
namespace {

PipeShape binary_shape(const Plan& plan, Rank me) {
  PipeShape shape;
  const Rank v = plan.to_virtual(me);
  for (Rank c : {topology::heap_left(v, plan.nodes()), topology::heap_right(v, plan.nodes())})
    if (c != kNoRank) shape.add_child(0, plan.to_real(c));
  return shape;
}

}  // namespace

std::unique_ptr<Machine> make_binary(const Plan& plan, Rank me) {
  return make_on_heap<PipelineMachine>(plan, me, binary_shape(plan, me));
}

MachinePtr make_binary(const Plan& plan, Rank me, MachineArena& arena) {
  return arena.make<PipelineMachine>(plan, me, binary_shape(plan, me));
}

}  // namespace lanecast::algos
