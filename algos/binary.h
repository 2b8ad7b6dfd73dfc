// binary: the pipelined binary-tree broadcast (Open MPI
// ompi_coll_base_bcast_intra_bintree; J. Pjesivac-Grbovic et al., "Performance
// analysis of MPI collective operations", Cluster Computing 2007): a heap-shaped
// binary tree in virtual ranks (algos/topology/binary.h); every node forwards
// each segment to both children as soon as it holds it.
#pragma once

#include <memory>

#include "algos/arena.h"
#include "algos/machine.h"

namespace lanecast::algos {

std::unique_ptr<Machine> make_binary(const Plan& plan, Rank me);
// In an arena: a PipelineMachine, sized by pipeline_arena_bytes() (pipeline.h).
MachinePtr make_binary(const Plan& plan, Rank me, MachineArena& arena);

}  // namespace lanecast::algos
