// circulant: Träff's round-optimal broadcast on a circulant graph (J. L.
// Träff, "Optimal Broadcast Schedules in Logarithmic Time with Applications
// to Broadcast, All-Broadcast, Reduction and All-Reduction", ACM TOPC 2025,
// arXiv:2407.18004; MPICH 4's MPIR_Bcast_intra_circ_graph runs the same
// schedule over MPI). In the one-ported, full-duplex model it takes
// n - 1 + ceil(log2 p) rounds for n segments, the fewest possible; every
// rank sends about n segments and receives n, like a chain, but the last one
// arrives after log2 p rounds instead of p - 1.
//
// Each rank follows its send schedule round by round (algos/topology/
// circulant.h): in round i it sends to virtual rank r + skip[i mod q] the
// segment the schedule names, once it holds that segment - rounds stay in
// order, segments that arrive early wait for their round. Sends to the root
// and rounds that name no segment are passed over; so are the last rounds'
// repeats of the final segment to a rank that has it already, so every rank
// receives every segment exactly once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "algos/arena.h"
#include "algos/machine.h"

namespace lanecast::algos {

std::unique_ptr<Machine> make_circulant(const Plan& plan, Rank me);
MachinePtr make_circulant(const Plan& plan, Rank me, MachineArena& arena);
// The arena bytes make_circulant needs at most for any root, any rank and any
// message of at most max_segments segments in a group of `nodes`.
size_t circulant_arena_bytes(uint32_t nodes, uint32_t max_segments);

}  // namespace lanecast::algos
