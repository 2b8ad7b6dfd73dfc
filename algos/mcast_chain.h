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
// Not here (yet): the paper's root delay and randomized single-process
// synchronisation, which need timers in the machine interface.
#pragma once

#include <memory>

#include "algos/machine.h"

namespace lanecast::algos {

std::unique_ptr<Machine> make_mcast_chain(const Plan& plan, Rank me);

}  // namespace lanecast::algos
