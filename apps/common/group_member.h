// What `lanecast run` and `lanecast bench --config` share: reading the group
// file, settling this process's rank (given, or the PMIx launcher's for a
// pmix group), checking the command's rank, root and sizes against the
// group, the engine options of one member process of that group, and the
// notice a group without a key gets.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "lanecast/lanecast.h"

namespace lanecast::apps {

struct GroupMember {
  GroupSpec spec;
  uint32_t rank = 0;
};

// `rank`: --rank if given. Without it, a pmix group takes the launcher's
// rank. Throws UsageError (exit 2) for a rank, root or size the group cannot
// have, a missing rank, or a --rank other than the launcher's; the group
// file's own errors are std::invalid_argument with file:line.
GroupMember load_group_for(const std::string& config, std::optional<uint32_t> rank, uint32_t root,
                           uint64_t max_size);
EngineOptions member_engine_options(const GroupMember& who, uint32_t cores, bool yield_when_idle,
                                    bool progress_in_calls = false);
// A group joined without a key (on a network: a joined group's ports are
// real): one notice on stderr, once per process, that anyone on its segment
// can disturb it (docs/security.md).
void notice_if_keyless(const Group& g);
// "--progress cores|calls": whether the engine progresses in calls
// (EngineOptions::progress_in_calls). Throws UsageError for anything else.
bool parse_progress(std::string_view v);

}  // namespace lanecast::apps
