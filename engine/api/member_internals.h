// What lanecast's own tools (the bench, the tests) see of a member beyond
// the public API: the algorithm as the engine names it, what `auto` knows,
// the counters as the core keeps them, and the text of a completion record.
// Not for applications: lanecast/lanecast.h is their whole interface.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "algos/auto/rules.h"
#include "algos/registry.h"
#include "lanecast/lanecast.h"
#include "engine/node/node_counters.h"
#include "engine/node/op_types.h"

namespace lanecast {

// The algorithm a broadcast of `size` bytes runs when posted with `algo`.
algos::Algo resolve_algo(const Member& m, std::string_view algo, uint64_t size);
// What `auto` knows of the member's group for a message of `size` bytes.
algos::autoselect::Situation situation_of(const Member& m, uint64_t size);
const engine::NodeCounters& node_counters(const Member& m);
// Readable text for a failed operation.
std::string describe(const engine::CompletionRecord& rec);
ErrorKind error_kind(engine::OpError e);

}  // namespace lanecast
