// tune --stream SIZE: a stream of SIZE-byte messages measured where the
// group runs (`lanecast bench --stream`), down the group's stream tree and
// over multicast, each beside what `lanecast plan --stream` predicts for it
// with the model tune fitted.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "apps/common/progress_line.h"
#include "apps/tune/model_fit.h"

namespace lanecast::apps {

struct StreamCheck {
  std::string mode;  // "tree" or "multicast"
  uint32_t fanout = 0;
  double msgs_per_s = 0, frames_per_msg = 0;  // measured (0 with `error`)
  double predicted_msgs_per_s = 0, predicted_copies_per_msg = 0;  // 0 without a model
  std::string error;  // why this mode was not measured (a port without multicast)
};

// `bench` is where the group runs (tune's arguments after --); `model`
// null: measured only.
std::vector<StreamCheck> check_streams(const std::vector<std::string>& bench, uint32_t nodes, uint64_t size,
                                       uint64_t messages, const ModelParams* model, ProgressLine& progress);

}  // namespace lanecast::apps
