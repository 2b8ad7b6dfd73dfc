// binomial: the MPI binomial-tree broadcast (MPICH MPIR_Bcast_intra_binomial,
// Open MPI ompi_coll_base_bcast_intra_binomial without segmentation): store and
// forward of the whole message. A node forwards to its children only once it
// holds every segment, then sends the whole message to each child in turn,
// largest subtree first. Ranks are rotated so that any rank may be root.
// Shape: algos/topology/binomial.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "algos/arena.h"
#include "algos/machine.h"

namespace lanecast::algos {

std::unique_ptr<Machine> make_binomial(const Plan& plan, Rank me);
MachinePtr make_binomial(const Plan& plan, Rank me, MachineArena& arena);
// The arena bytes make_binomial needs at most for any root, any rank and any
// message of at most max_segments segments in a group of `nodes`.
size_t binomial_arena_bytes(uint32_t nodes, uint32_t max_segments);

}  // namespace lanecast::algos
