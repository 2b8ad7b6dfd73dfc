// Faults as one line of text (`lanecast bench --faults`, the soak's
// --faults): rules separated by ';', each a list of key=value separated by
// ','. The fault keys are LinkFaults' (engine/group/fault_keys.h), plus
// burst=ENTER:LEAVE[:LOSS_BAD[:LOSS_GOOD]] for Gilbert-Elliott bursts; a
// rule's frames are chosen by member=R, direction=receive|send, peer=R and
// frames=all|unicast|multicast (defaults: every member, receive, any peer,
// all); seed=S, given once in any rule, seeds them all.
//
//   loss=0.05,reorder=0.02,dup=0.01,corrupt=0.005,seed=7
//   burst=0.001:0.3;direction=send,peer=2,frames=multicast,loss=0.5
#pragma once

#include <string>
#include <string_view>

#include "lanecast/group_spec.h"
#include "lanecast/lanecast.h"

namespace lanecast::apps {

// Throws UsageError naming `what` (the option), the rule and the key.
FaultOptions parse_fault_text(std::string_view text, std::string_view what);
// The keys, a line each, for --help.
std::string fault_text_help();
// "  faults received: lost=... burst_lost=..." lines for --counters, one per
// way that saw a fault; "" when none did.
std::string fault_counters_text(const PortCounters& p);

}  // namespace lanecast::apps
