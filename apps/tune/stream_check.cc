#include "apps/tune/stream_check.h"

#include <chrono>
#include <stdexcept>

#include "apps/common/json_output.h"
#include "apps/common/subprocess.h"
#include "apps/tune/lanecast_run.h"

namespace lanecast::apps {
namespace {

// The first object of a JSON value: bench's array of rows, an object with
// "results" (bench --testbed), or plan --stream's object or array.
const Json* first_row(const Json& j) {
  const Json* rows = j.is_object() && j.contains("results") ? &j["results"] : &j;
  if (rows->is_array()) return rows->empty() || !(*rows)[0].is_object() ? nullptr : &(*rows)[0];
  return rows->is_object() ? rows : nullptr;
}

StreamCheck measure(const std::vector<std::string>& bench, bool multicast, uint64_t size, uint64_t messages,
                    ProgressLine& progress) {
  StreamCheck s;
  s.mode = multicast ? "multicast" : "tree";
  Argv argv{this_program(), "bench"};
  argv.insert(argv.end(), bench.begin(), bench.end());
  argv.insert(argv.end(), {"--stream", "--sizes", std::to_string(size), "--messages", std::to_string(messages),
                           "--json", "--quiet"});
  if (multicast) argv.push_back("--stream-multicast");
  std::string out;
  try {
    out = run_lanecast(argv, &progress, "measuring a " + s.mode + " stream", std::chrono::hours(2));
  } catch (const std::runtime_error& e) {
    if (!multicast) throw;
    s.error = e.what();  // a port without multicast: the tree stands alone
    return s;
  }
  if (out.find_first_not_of(" \n") == std::string::npos) return s;  // a member that is not rank 0
  const Json j = Json::parse(out, nullptr, /*allow_exceptions=*/false);
  const Json* row = first_row(j);
  if (row == nullptr || !row->value("verified", false))
    throw std::runtime_error(command_line(argv) + ": no verified stream row: " + tail_lines(out, 3));
  s.fanout = row->value("fanout", 0u);
  s.msgs_per_s = row->value("msgs_per_s", 0.0);
  s.frames_per_msg = row->value("frames_per_msg", 0.0);
  return s;
}

void predict(StreamCheck& s, uint32_t nodes, uint64_t size, uint64_t messages, const ModelParams& model) {
  Argv argv{this_program(), "plan", "--stream", "--nodes", std::to_string(nodes), "--size", std::to_string(size),
            "--messages", std::to_string(messages), "--json", "--quiet"};
  if (s.mode == "multicast") argv.push_back("--stream-multicast");
  else argv.insert(argv.end(), {"--fanout", std::to_string(s.fanout)});
  for (const std::string& a : model.plan_args()) argv.push_back(a);
  const Json j = Json::parse(run_lanecast(argv, nullptr, "", std::chrono::minutes(30)), nullptr, false);
  const Json* row = first_row(j);
  if (row == nullptr) throw std::runtime_error(command_line(argv) + ": printed no stream row");
  s.predicted_msgs_per_s = row->value("msgs_per_s", 0.0);
  s.predicted_copies_per_msg = row->value("copies_per_msg", 0.0);
}

}  // namespace

std::vector<StreamCheck> check_streams(const std::vector<std::string>& bench, uint32_t nodes, uint64_t size,
                                       uint64_t messages, const ModelParams* model, ProgressLine& progress) {
  std::vector<StreamCheck> out;
  for (const bool multicast : {false, true}) {
    StreamCheck s = measure(bench, multicast, size, messages, progress);
    if (s.error.empty() && s.msgs_per_s > 0 && model != nullptr) predict(s, nodes, size, messages, *model);
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace lanecast::apps
