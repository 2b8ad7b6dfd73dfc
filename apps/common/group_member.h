// What `lanecast run` and `lanecast bench --config` share: reading the group
// file and checking the command's rank, root and sizes against it, and the
// engine options of one member process of that group.
#pragma once

#include <cstdint>
#include <string>

#include "engine/lanecast.h"

namespace lanecast::apps {

// Throws UsageError (exit 2) for a rank, root or size the group cannot have;
// the group file's own errors are std::invalid_argument with file:line.
GroupSpec load_group_for(const std::string& config, uint32_t rank, uint32_t root, uint64_t max_size);
EngineOptions member_engine_options(const GroupSpec& spec, uint32_t cores, bool yield_when_idle);

}  // namespace lanecast::apps
