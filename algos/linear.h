// linear: the root sends every segment to every other rank, segment-major (seg 0
// to all, seg 1 to all, ...). The baseline of MPI's linear broadcast
// (Open MPI ompi_coll_base_bcast_intra_basic_linear, MPICH's flat tree).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "algos/arena.h"
#include "algos/machine.h"

namespace lanecast::algos {

std::unique_ptr<Machine> make_linear(const Plan& plan, Rank me);
MachinePtr make_linear(const Plan& plan, Rank me, MachineArena& arena);
// The arena bytes make_linear needs at most for any root, any rank and any
// message of at most max_segments segments in a group of `nodes`.
size_t linear_arena_bytes(uint32_t nodes, uint32_t max_segments);

}  // namespace lanecast::algos
