// scatter_allgather: van de Geijn's long-message broadcast (M. Barnett, S.
// Gupta, D. Payne, L. Shuler, R. van de Geijn, J. Watts, "Interprocessor
// Collective Communication Library (InterCom)", SHPCC 1994; as in MPICH
// MPIR_Bcast_intra_scatter_ring_allgather and ..._scatter_recursive_doubling_allgather):
// the message is cut into p chunks (algos/topology/pieces.h), chunk v belonging
// to virtual rank v; a binomial scatter (algos/topology/binomial.h) gives every
// rank its chunk, then an allgather gives every rank every chunk.
//
// Segments are forwarded as they arrive, in both phases. Allgather:
//  - ring (MPICH's): rank v sends its own chunk to v+1 and passes on every chunk
//    that arrives from v-1 unless it belongs to v+1; the root takes part like any
//    rank, so it receives the chunks it already holds (and ignores them), and
//    ranks whose scatter subtree held a chunk receive it again from the ring;
//  - recursive doubling (p a power of two): rank v sends each chunk c it holds
//    to its partners v ^ 2^k for every step k at or above the highest bit where
//    c and v differ; a partner that already holds c from the scatter (or the
//    root) is skipped, so every rank receives every segment exactly once.
// Auto picks recursive doubling for powers of two, the ring otherwise.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "algos/arena.h"
#include "algos/machine.h"

namespace lanecast::algos {

enum class Allgather : uint8_t { Auto, Ring, RecursiveDoubling };

// Throws std::invalid_argument for recursive doubling on a group that is not a
// power of two.
std::unique_ptr<Machine> make_scatter_allgather(const Plan& plan, Rank me, Allgather allgather);
std::unique_ptr<Machine> make_scatter_allgather(const Plan& plan, Rank me);
MachinePtr make_scatter_allgather(const Plan& plan, Rank me, Allgather allgather, MachineArena& arena);
MachinePtr make_scatter_allgather(const Plan& plan, Rank me, MachineArena& arena);
// The arena bytes make_scatter_allgather needs at most with `allgather` for
// any root, any rank and any message of at most max_segments segments in a
// group of `nodes`.
size_t scatter_allgather_arena_bytes(uint32_t nodes, uint32_t max_segments,
                                     Allgather allgather = Allgather::Auto);

}  // namespace lanecast::algos
