// linear: the root sends every segment to every other rank, segment-major (seg 0
// to all, seg 1 to all, ...). The baseline of MPI's linear broadcast
// (Open MPI ompi_coll_base_bcast_intra_basic_linear, MPICH's flat tree).
#pragma once

#include <memory>

#include "algos/machine.h"

namespace lanecast::algos {

std::unique_ptr<Machine> make_linear(const Plan& plan, Rank me);

}  // namespace lanecast::algos
