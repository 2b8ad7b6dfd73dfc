// `lanecast bench` in one process: N members on the in-process fabric (or a
// DPDK port each, --ports), every size of every algorithm broadcast K times
// with every member's bytes checked, or a stream (--stream); printed by
// bench_report.h.
#pragma once

#include <string>
#include <vector>

#include "apps/bench/bench_options.h"
#include "apps/common/options.h"

namespace lanecast::apps {

int bench_in_process(const BenchConfig& c, const OptionTable& table, const std::vector<std::string>& algos);

}  // namespace lanecast::apps
