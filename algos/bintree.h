// bintree: Happe & Vinter's segmented bintree (H. H. Happe, B. Vinter,
// "Improving TCP/IP Multicasting with Message Segmentation", Communicating
// Process Architectures 2005): two binary trees over the p - 1 receivers, built
// so that each receiver has at most two children counting both trees
// (algos/topology/two_trees.h). The root sends even segments into tree 0 and odd
// segments into tree 1; segments flow to the leaves as they arrive. Each node
// sends at most about the message size (exactly at most M when the message is a
// whole number of segment pairs; at most M + one segment otherwise) and talks to
// at most four peers. The pipelined chain ("segmented seqtree") is `chain`.
#pragma once

#include <memory>

#include "algos/arena.h"
#include "algos/machine.h"

namespace lanecast::algos {

std::unique_ptr<Machine> make_bintree(const Plan& plan, Rank me);
// In an arena: a PipelineMachine, sized by pipeline_arena_bytes() (pipeline.h).
MachinePtr make_bintree(const Plan& plan, Rank me, MachineArena& arena);

}  // namespace lanecast::algos
