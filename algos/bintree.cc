#include "algos/bintree.h"

#include "algos/arena.h"
#include "algos/pipeline.h"
#include "algos/topology/two_trees.h"

namespace lanecast::algos {
namespace {

PipeShape bintree_shape(const Plan& plan, Rank me) {
  PipeShape shape;
  shape.classes = 2;
  const Rank v = plan.to_virtual(me);
  for (uint32_t t = 0; t < 2; ++t) {
    std::array<Rank, 2> kids{};
    const uint32_t n = topology::two_tree_children(t, v, plan.nodes(), kids);
    for (uint32_t i = 0; i < n; ++i) shape.add_child(t, plan.to_real(kids[i]));
  }
  return shape;
}

}  // namespace

std::unique_ptr<Machine> make_bintree(const Plan& plan, Rank me) {
  return make_on_heap<PipelineMachine>(plan, me, bintree_shape(plan, me));
}

MachinePtr make_bintree(const Plan& plan, Rank me, MachineArena& arena) {
  return arena.make<PipelineMachine>(plan, me, bintree_shape(plan, me));
}

}  // namespace lanecast::algos
