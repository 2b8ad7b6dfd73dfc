// `lanecast replay`'s options: the table that parses ReplayConfig
// (replay_config.h) and documents it, and the usage text. replay_command.cc
// checks which apply to which mode and hands over to a runner
// (replay_in_process.cc, replay_member.cc, or a testbed of members).
#pragma once

#include "apps/common/options.h"
#include "apps/replay/replay_config.h"

namespace lanecast::apps {

// `timing_given` counts the options that set the pace (at most one may).
OptionTable make_replay_table(ReplayConfig& c, int& timing_given);
extern const char* const kReplayUsage;

}  // namespace lanecast::apps
