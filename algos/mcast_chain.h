// mcast_chain: the two-stage multicast broadcast of T. Hoefler, C. Siebert,
// W. Rehm, "A practically constant-time MPI Broadcast Algorithm for large-scale
// InfiniBand Clusters with Multicast", IPDPS 2007 (CAC workshop).
//
// Stage 1: the root multicasts every segment (the paper's fragment) once; the
// network may lose any copy, independently per receiver. Stage 2: a virtual
// ring in virtual-rank order (Plan::to_virtual, the root is 0) in which every
// node sends each segment it holds, from the multicast or from its
// predecessor, reliably to its successor, once, whichever copy came first; the
// edge into the root (from virtual rank p-1) is omitted. Later copies are
// ignored. A node is done when it holds every segment and has passed each one
// on. The ring alone delivers everything, so any loss pattern is repaired; a
// node that missed a multicast waits for its predecessor, which is why the
// time grows with the longest run of consecutive losers in the ring.
//
// The root emits, per segment, its multicast and then its ring send. With two
// lanes or more the ring runs on lane 1 and the multicast on lane 0.
//
// The paper's two options against process skew (an InfiniBand multicast copy
// that reaches a process before it posted its receive, i.e. entered the
// broadcast, is lost), both from PlanParams::algo, both off by default, either
// or both on (the root then waits for both):
//  - root delay (AlgoOptions::root_delay_ns): the root arms a timer in start()
//    and emits nothing, multicast or ring send, before it fires;
//  - randomized single-process synchronisation (AlgoOptions::sync_seed): per
//    operation every member computes the same non-root rank c =
//    mcast_sync_rank(seed, op, p, root); c signals the root from its start(),
//    and the root emits nothing before that signal arrived. The paper's
//    argument: processes enter at random times, so waiting for a random one
//    makes the root start after about half of them, at the cost of one
//    message latency instead of a barrier's log p.
// Neither applies to an empty message or a group of one (nothing to multicast).
//
// Repair on request (AlgoOptions::nack_repair; the engine's default). In the
// paper's ring every node sends every segment to its successor although the
// multicast has already brought it there, so every receiver's link carries
// each segment twice and a large broadcast runs at half the link's rate. With
// nack_repair each ring edge carries only the last segment, always, and what
// the successor asked for: a node asks its predecessor (a signal per segment)
// for every segment it finds missing when a later one arrives - the last one,
// which always comes, closes every gap - and tells it when it holds them all;
// a node sends each asked-for segment once, when it holds it, and is done
// when its successor holds everything. No loss: the root sends m multicasts
// and one frame, each edge one frame and one signal back, instead of m each.
// Losses cost what the ring costs: a segment lost at k consecutive nodes is
// asked for hop by hop. Messages of one or two segments keep the paper's
// ring: there the "all held" signal would cost each edge as much as it saves.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "algos/arena.h"
#include "algos/machine.h"

namespace lanecast::algos {

std::unique_ptr<Machine> make_mcast_chain(const Plan& plan, Rank me);
MachinePtr make_mcast_chain(const Plan& plan, Rank me, MachineArena& arena);
// The arena bytes make_mcast_chain needs at most for any root, any rank and
// any message of at most max_segments segments in a group of `nodes`.
size_t mcast_chain_arena_bytes(uint32_t nodes, uint32_t max_segments);

// The rank that synchronises with the root in operation `op`: uniform over the
// p-1 non-root ranks, a pure function of (seed, op, p, root), so every member
// computes it alike. Throws std::invalid_argument for p < 2 or a root outside.
Rank mcast_sync_rank(uint64_t seed, uint64_t op, uint32_t p, Rank root);

}  // namespace lanecast::algos
