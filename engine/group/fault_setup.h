// A member's port with its group's faults on it (GroupOptions::faults,
// GroupSpec::faults; drivers/fault/): the rules that apply to the member, its
// peers' addresses as the links, the group's pools for duplicates and
// corrupted copies, the engine's clock.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "drivers/port.h"
#include "lanecast/group_spec.h"
#include "engine/runtime/pools.h"

namespace lanecast::engine {

// Whether any rule with a fault applies to member `rank`'s port.
bool faults_apply(const FaultOptions& f, uint32_t rank);

// Member `rank`'s port `inner` (owned, or not: the fabric owns its ring
// ports) under the rules that apply to it; `addrs` are every member's
// addresses, by rank. nullptr when none applies. The options must have
// passed check_faults (engine/group/fault_keys.h).
std::unique_ptr<drivers::Port> fault_port(drivers::Port& inner, const FaultOptions& f, uint32_t rank,
                                          const std::vector<drivers::PeerAddress>& addrs, const Pools& pools);
std::unique_ptr<drivers::Port> fault_port(std::unique_ptr<drivers::Port> inner, const FaultOptions& f, uint32_t rank,
                                          const std::vector<drivers::PeerAddress>& addrs, const Pools& pools);

}  // namespace lanecast::engine
