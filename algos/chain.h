// chain: the pipelined chain in virtual-rank order, Happe & Vinter's "segmented
// seqtree" (H. H. Happe, B. Vinter, "Improving TCP/IP Multicasting with Message
// Segmentation", Communicating Process Architectures 2005). Every node forwards
// each segment to its successor as soon as it holds it.
#pragma once

#include <memory>

#include "algos/arena.h"
#include "algos/machine.h"

namespace lanecast::algos {

std::unique_ptr<Machine> make_chain(const Plan& plan, Rank me);
// In an arena: a PipelineMachine, sized by pipeline_arena_bytes() (pipeline.h).
MachinePtr make_chain(const Plan& plan, Rank me, MachineArena& arena);

}  // namespace lanecast::algos
