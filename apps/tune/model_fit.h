// Fitting the simulator's network model to what `lanecast tune` measured, so
// that `lanecast plan` predicts this group: the link rate (--bw), the
// latency of a transfer (--t0), a token bucket per port (--port-burst) and
// the payload per frame (--segment). `plan` itself is the model: every
// prediction is a run of `lanecast plan --json` with the parameters tried,
// so what tune writes is what a user gets by typing the same command.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace lanecast::apps {

// size -> algorithm -> us
using TimeTable = std::map<uint64_t, std::map<std::string, double>>;

struct ModelParams {
  double bw_mbytes = 0;      // --bw, 10^6 bytes/s
  double t0_us = 0;          // --t0
  uint64_t burst_bytes = 0;  // --port-burst (0: none)
  uint32_t segment = 0;      // --segment
  // "--bw 22.57 --t0 30.1 --segment 1428 --port-burst 10000", as plan takes them.
  std::vector<std::string> plan_args() const;
};

// What plan predicts with `p` for these algorithms at these sizes, for the
// group measured: complete runs only (an algorithm plan could not finish is
// left out).
using Predictor = std::function<TimeTable(const ModelParams& p, const std::vector<std::string>& algos,
                                          const std::vector<uint64_t>& sizes)>;

struct ModelFit {
  ModelParams params;
  // How each parameter was found, one line each, for the rules' comments.
  std::vector<std::string> how;
  TimeTable predicted;  // at every (size, algorithm) measured
  uint32_t predictions = 0;  // plan runs the fit took
};

// The fit, in this order (each step holds the earlier ones fixed):
//   1. segment: as the group resolved it (bench reports it);
//   2. rate: chain's marginal rate between the two largest sizes (its steady
//      state moves every byte once over each link, so the bytes between two
//      pipelined sizes over the time between them is the link's rate); the
//      fastest algorithm's marginal rate when chain was not measured;
//   3. t0: the least squared log error of every algorithm at the smallest
//      size (golden-section search; a few frames: almost nothing but t0);
//   4. the bucket: the least squared log error of every algorithm at the
//      larger sizes, over 0 and 1..64 frames (a tbf lets its burst through
//      at once, which is what makes pipelines fast at mid sizes);
//   5. t0 again, with the bucket.
// Throws std::runtime_error when the table cannot give a rate (fewer than one
// size above a frame).
ModelFit fit_model(const TimeTable& measured, uint32_t segment, const Predictor& predict);

// The predictor that runs `program plan --nodes N --json ...` (the lanecast
// binary itself).
Predictor plan_predictor(const std::string& program, uint32_t nodes);

}  // namespace lanecast::apps
