// `lanecast bench --config FILE --rank R`: the bench with one member per
// process (Engine::join), every member running the same schedule.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lanecast::apps {

struct GroupBenchConfig {
  std::string config;  // group file
  std::optional<uint32_t> rank;  // none: the PMIx launcher's (a pmix group)
  std::vector<std::string> algos;  // each broadcast's algorithm ("auto" allowed)
  std::vector<uint64_t> sizes;
  uint32_t iters = 10, warmup = 2;
  uint32_t root = 0;
  uint64_t seed = 1;
  uint32_t cores = 0;
  bool yield_when_idle = false;
  bool counters = false;  // print this member's counters at the end
};

int bench_group(const GroupBenchConfig& c);

}  // namespace lanecast::apps
