// `lanecast plan --stream`: the stream model (algos/sim/stream_sim.h) for
// each (nodes, message size) asked, as a table or a JSON array.
#pragma once

#include "apps/plan/plan_options.h"

namespace lanecast::apps {

// Prints the predictions; returns the exit status (0).
int run_plan_stream(const PlanConfig& c);

}  // namespace lanecast::apps
