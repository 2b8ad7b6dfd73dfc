#include "apps/common/group_member.h"

#include <algorithm>

#include "apps/common/options.h"

namespace lanecast::apps {

GroupSpec load_group_for(const std::string& config, uint32_t rank, uint32_t root, uint64_t max_size) {
  GroupSpec spec = load_group_file(config);
  const auto n = static_cast<uint32_t>(spec.members.size());
  if (rank >= n)
    throw UsageError("--rank " + std::to_string(rank) + ": " + config + " has ranks 0.." + std::to_string(n - 1));
  if (root >= n) throw UsageError("--root " + std::to_string(root) + " is outside the group of " + std::to_string(n));
  if (max_size > spec.max_message_bytes)
    throw UsageError("--sizes: " + format_size(max_size) + " exceeds the group's max_message of " +
                     format_size(spec.max_message_bytes));
  return spec;
}

EngineOptions member_engine_options(const GroupSpec& spec, uint32_t cores, bool yield_when_idle) {
  EngineOptions eo;
  eo.polling_cores = cores;
  eo.yield_when_idle = yield_when_idle;
  // The member's pools: about two messages' worth, and room besides.
  eo.memory_mb = static_cast<uint32_t>(std::max<uint64_t>(512, (3 * spec.max_message_bytes >> 20) + 512));
  return eo;
}

}  // namespace lanecast::apps
