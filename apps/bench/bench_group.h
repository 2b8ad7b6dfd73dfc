// `lanecast bench --config FILE --rank R`: the bench with one member per
// process (Engine::join), every member running the same schedule.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lanecast::apps {

// What every member process of a bench runs: the same on every member, so
// `--config` (this process's member) and `--testbed` (the members it starts)
// take it from the command line alike.
struct MemberSchedule {
  std::vector<std::string> algos;  // each broadcast's algorithm ("auto" allowed)
  std::vector<uint64_t> sizes;
  uint32_t iters = 10, warmup = 2;
  uint32_t root = 0;
  uint64_t seed = 1;
  uint32_t cores = 0;     // 0: each member's default
  // The member progresses on the bench's own thread while it waits (no
  // polling core: EngineOptions::progress_in_calls).
  bool progress_in_calls = false;
  bool counters = false;  // every member's counters at the end
  bool json = false;      // rank 0 prints JSON (the in-process objects, timed per process) instead of tables
  bool quiet = false;     // no progress lines on stderr
  std::string auto_rules;  // rules for "auto" in place of the group file's (every member is given the same)
  // A stream from `root` instead of broadcasts (stream_group.cc): per size
  // `warmup` untimed and stream_messages timed messages, offered at msg_rate
  // per second (0: as fast as the window allows).
  bool stream = false;
  uint64_t stream_messages = 0;
  double msg_rate = 0;
};

struct GroupBenchConfig : MemberSchedule {
  std::string config;  // group file
  std::optional<uint32_t> rank;  // none: the PMIx launcher's (a pmix group)
  bool yield_when_idle = false;
};

int bench_group(const GroupBenchConfig& c);
int stream_group(const GroupBenchConfig& c);

}  // namespace lanecast::apps
