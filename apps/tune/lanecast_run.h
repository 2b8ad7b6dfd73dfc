// tune runs this lanecast binary again: bench to measure, plan to predict.
// One way to do it: the command shown as progress, bounded, its stdout
// returned; a failure is an exception that names the command and ends with
// the last lines it wrote.
#pragma once

#include <chrono>
#include <string>

#include "apps/common/progress_line.h"
#include "apps/common/subprocess.h"

namespace lanecast::apps {

// `lanecast ARGS...`: argv[0] is this_program(). `what` prefixes the
// progress line (nullptr: none shown). Exit status 0, or 1 when
// `exit1_ok` (plan: a broadcast that did not complete, its row says so).
std::string run_lanecast(const Argv& argv, ProgressLine* progress, const std::string& what,
                         std::chrono::milliseconds limit, bool exit1_ok = false);

// The last `lines` lines of `text`, for an error message.
std::string tail_lines(const std::string& text, size_t lines);

}  // namespace lanecast::apps
