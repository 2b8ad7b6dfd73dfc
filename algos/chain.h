// chain: the pipelined chain in virtual-rank order, Happe & Vinter's "segmented
// seqtree" (H. H. Happe, B. Vinter, "Improving TCP/IP Multicasting with Message
// Segmentation", Communicating Process Architectures 2005). Every node forwards
// each segment to its successor as soon as it holds it.
#pragma once

#include <memory>

#include "algos/machine.h"

namespace lanecast::algos {

std::unique_ptr<Machine> make_chain(const Plan& plan, Rank me);

}  // namespace lanecast::algos
