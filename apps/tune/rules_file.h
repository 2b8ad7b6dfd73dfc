// The rules file `lanecast tune` writes: what was measured, plan's fitted
// model and its predictions, as comments; the fastest algorithm per size as
// rules `auto` reads; the built-in rules after them. Written beside the
// target and renamed over it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "apps/tune/model_fit.h"
#include "apps/tune/stream_check.h"

namespace lanecast::apps {

// The algorithm with the least time.
std::string fastest(const std::map<std::string, double>& at);

// What plan predicts for (size, algo), or nullptr (no fit, or not predicted).
const double* predicted_at(const ModelFit* fit, uint64_t size, const std::string& algo);

// "lanecast plan --nodes 8 --bw ... --port-burst ...": the fitted model as
// a user types it.
std::string plan_command(const ModelFit& fit, uint32_t nodes);

// The file's text. `how` says how the times were measured; `fit` may be
// null (--no-fit); `stream_lines` (stream_text) go in as comments.
std::string rules_text(const TimeTable& t, uint32_t nodes, const std::string& how, const ModelFit* fit,
                       const std::string& stream_lines);

// The streams measured, a heading and a line per mode (empty: none).
std::string stream_text(const std::vector<StreamCheck>& streams, uint64_t size, uint64_t messages);

// `text` at `path`, never through a link planted at the name, never half a file.
void write_file(const std::string& path, const std::string& text);

}  // namespace lanecast::apps
