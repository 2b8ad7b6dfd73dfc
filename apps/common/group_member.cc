#include "apps/common/group_member.h"

#include <algorithm>
#include <atomic>
#include <cstdio>

#include "apps/common/options.h"

namespace lanecast::apps {
namespace {

// --rank, or for a pmix group the rank its launcher gave this process.
uint32_t settle_rank(const GroupSpec& spec, const std::string& config, std::optional<uint32_t> given) {
  if (spec.bootstrap != "pmix") {
    if (!given)
      throw UsageError("--rank R is required: " + config + " has bootstrap \"" + spec.bootstrap +
                       "\" (only a pmix group takes the rank from its launcher)");
    return *given;
  }
  const std::optional<Rank> launcher = pmix_rank();
  if (!given && !launcher)
    throw UsageError("--rank R is required: " + config +
                     " has bootstrap \"pmix\", but this process was not started by a PMIx launcher "
                     "(mpirun/prterun/srun): no PMIX_RANK in its environment");
  if (given && launcher && *given != *launcher)
    throw UsageError("--rank " + std::to_string(*given) + ", but the PMIx launcher started this process as rank " +
                     std::to_string(*launcher) + " (leave --rank out, or give the launcher's)");
  return given ? *given : *launcher;
}

}  // namespace

GroupMember load_group_for(const std::string& config, std::optional<uint32_t> rank, uint32_t root,
                           uint64_t max_size) {
  GroupMember m{load_group_file(config), 0};
  m.rank = settle_rank(m.spec, config, rank);
  const auto n = static_cast<uint32_t>(m.spec.members.size());
  if (m.rank >= n)
    throw UsageError("rank " + std::to_string(m.rank) + ": " + config + " has ranks 0.." + std::to_string(n - 1));
  if (root >= n) throw UsageError("--root " + std::to_string(root) + " is outside the group of " + std::to_string(n));
  if (max_size > m.spec.max_message_bytes)
    throw UsageError("--sizes: " + format_size(max_size) + " exceeds the group's max_message of " +
                     format_size(m.spec.max_message_bytes));
  return m;
}

EngineOptions member_engine_options(const GroupMember& who, uint32_t cores, bool yield_when_idle,
                                    bool progress_in_calls) {
  EngineOptions eo;
  eo.polling_cores = cores;
  eo.yield_when_idle = yield_when_idle;
  eo.progress_in_calls = progress_in_calls;
  // The member's pools and a quarter more, plus room for DPDK's own
  // structures (ports, rings, per-lcore caches). Not more: without hugepages
  // DPDK describes its memory page by page (4 KiB) and every process
  // initialises that table at start-up, on the path of a group's formation.
  const uint64_t pools = Group::memory_bytes(who.spec, who.rank);
  eo.memory_mb = static_cast<uint32_t>(std::max<uint64_t>(128, ((pools + pools / 4) >> 20) + 96));
  return eo;
}

void notice_if_keyless(const Group& g) {
  static std::atomic<bool> said{false};
  if (g.caps().sealed || said.exchange(true)) return;
  std::fprintf(stderr,
               "lanecast: notice: group %s has no key: anyone on its network segment can forge its frames - "
               "break its broadcasts, deliver bytes of its own, end its bootstraps (docs/security.md; "
               "`lanecast key --new FILE`, then key_file in the group file)\n",
               g.spec().name.c_str());
  std::fflush(stderr);
}

bool parse_progress(std::string_view v) {
  if (v == "cores") return false;
  if (v == "calls") return true;
  throw UsageError("--progress: '" + std::string(v) + "' is neither 'cores' nor 'calls'");
}

}  // namespace lanecast::apps
