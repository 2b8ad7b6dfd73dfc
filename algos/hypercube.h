// hypercube: Figueira's dimension-ordered hypercube broadcast (S. M. Figueira,
// "Using a Hypercube Algorithm for Broadcasting in Internet-Based Clusters",
// PDPTA 2000): at step i, every node that holds the message sends it whole to
// its partner id XOR 2^i (algos/topology/hypercube.h). Store and forward, as in
// the paper: a node sends once it holds every segment, whole message to each
// partner in step order. Any group size (absent ids are skipped).
//
// Node ids are positions in an order (position -> rank), by default the rank
// itself; form_hypercube() (algos/topology/form_hypercube.h) computes a
// latency-aware order from a latency matrix, which the plan does not carry: the
// caller (simulator, engine) passes it here. The root's position becomes id 0 by
// XOR when p is a power of two (which keeps every subcube a subcube), by
// rotation otherwise.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "algos/arena.h"
#include "algos/machine.h"

namespace lanecast::algos {

// order: empty (identity) or a permutation of 0..p-1; throws
// std::invalid_argument otherwise.
std::unique_ptr<Machine> make_hypercube(const Plan& plan, Rank me, std::span<const Rank> order);
std::unique_ptr<Machine> make_hypercube(const Plan& plan, Rank me);
MachinePtr make_hypercube(const Plan& plan, Rank me, std::span<const Rank> order, MachineArena& arena);
MachinePtr make_hypercube(const Plan& plan, Rank me, MachineArena& arena);
// The arena bytes make_hypercube needs at most for any root, any rank and any
// message of at most max_segments segments in a group of `nodes`; with_order:
// when given a non-empty order (its check takes a bitmap of `nodes` bits).
size_t hypercube_arena_bytes(uint32_t nodes, uint32_t max_segments, bool with_order = false);

}  // namespace lanecast::algos
