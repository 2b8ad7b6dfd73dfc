// Large plans, cheaply: a broadcast's simulated time is affine in its
// segment count once every rank's work is a steady stream of segments - a
// pipeline's fill and drain do not grow with the message, only its body
// does, one segment time per segment at the bottleneck port. So instead of
// simulating S segments on p nodes (p x S frames: 65 536 nodes x 48 000
// segments of 64 MiB would be 3 billion), simulate the same plan at three
// small segment counts (with the same last segment), fit the line through
// the two larger, check that the smallest lies on it, and read the line at
// S. Where the check fails the fit climbs: one more point at twice the
// largest, the check on the last three, until they lie on a line or the next
// point would save nothing. Every per-rank figure (finish, bytes, frames,
// multicast copies lost) is read off its own line the same way.
//
// Where the time is not affine in S over those points - an algorithm whose
// shape depends on S against p (scatter + allgather and symmetric cut the
// message into p pieces: with fewer segments than nodes most pieces are
// empty), a run with random multicast loss - the check fails and the
// reference runs instead, and `why_not` says so. docs/algorithms.md shows
// where the two agree.
//
// Pure: the simulations are the caller's (`simulate_plan`), so the engine's
// machines, the topology and every network option stay as they are.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "algos/plan.h"
#include "algos/sim/simulator.h"

namespace lanecast::algos::sim {

struct FitOptions {
  enum class Mode : uint8_t { Auto, Always, Never };
  Mode mode = Mode::Auto;
  // Auto: fit only plans of more (node, segment) pairs than this; below it
  // the reference runs (on one core about 10 s at this size).
  uint64_t min_work = uint64_t{1} << 26;
  // The first segment counts simulated, increasing. Most algorithms lie on
  // a line from 128 segments; a deep tree's fill takes longer (bintree on
  // 4096 nodes is 0.93% off a line through 128, 256 and 512, on one through
  // 256, 512 and 1024): with `climb` the fit then adds a point at twice the
  // largest and checks the last three, while the point is at most
  // max_point and below half the plan's segments. Each point costs
  // nodes x segments frames: at 65 536 nodes on one core, 128 + 256 + 512
  // take about 45 s, 256 + 512 + 1024 twice that.
  uint32_t points[3] = {128, 256, 512};
  bool climb = true;
  uint32_t max_point = 4096;
  // The smallest point's distance from the line through the other two, as a
  // fraction of its time, that still counts as affine.
  double tolerance = 0.001;
  // What the algorithm allows (fit_limits): points scaled up to start at
  // this many segments (a plan of no more than the largest runs in full),
  // or no fit at all, for this reason - for a plan of at least
  // refused_from segments (0: any plan).
  uint32_t min_first_point = 0;
  const char* refused = nullptr;
  uint32_t refused_from = 0;
  // Only the completion is read off its line (the result's per-rank vectors
  // stay empty): a rank's own figures are not affine in the segments.
  bool completion_only = false;
  // Points moved up to the plan's segment count modulo this (0: left alone).
  uint32_t point_modulus = 0;
};

struct SegmentFit {
  bool used = false;     // the result was read off the fitted line
  std::string why_not;   // else: why the reference ran
  bool refused = false;  // the plan was one to fit (large, or --fit always) and was not: why_not says why
  uint32_t points[3]{};  // the last three segment counts simulated (when tried)
  Picos times[3]{};      // their completions
  uint32_t simulated = 0;  // points simulated in all (more than 3: it climbed)
  double off_line = 0;   // the smallest point's distance from the line, a fraction of its time
};

using PlanSimulation = std::function<SimResult(const Plan&)>;

// The plan's result: fitted (SegmentFit::used) or simulated in full.
SimResult simulate_fitted(const Plan& plan, const PlanSimulation& simulate_plan, const FitOptions& opt,
                          SegmentFit* fit);

// What the fit needs of `algo` on `nodes` nodes (FitOptions::min_first_point
// and refused). Scatter + allgather cuts the message into one piece per
// node and changes its shape until there are as many segments as nodes:
// three points below that lie on a line of their own (at 4096 nodes 0.84%
// off it; symmetric's 256-1024 on 4096 nodes even passed the check and
// read 4.8 times the simulated time), so its points start at the node count.
// Symmetric is not affine in the segment count above it either (on 256
// nodes, points from 256 fitted 16% over the simulated time): it is fitted
// only below one segment per receiver, where each receiver forwards at most
// one segment and the time is the root's segments plus one copy to every
// receiver, a segment time each (on 4096 nodes, points 128-512 read 2996
// segments 0.05% under the simulated time, 4000 segments 0.33% under).
// Which receivers hold a segment moves with the count, so a rank's finish
// is not on a line: only the completion is read off.
//
// Circulant's time depends on where the segment count falls in its phase of
// ceil(log2 p) rounds (the last phase ends on the last segment, so the first
// starts part-way): its points keep the plan's count modulo the phase. On 16
// and 61 nodes they then lie on a line; at 4096 nodes x 64 MiB they are
// still 0.69% off it and the fit refuses; from 2049 nodes the group-size
// fit reads circulant off smaller groups instead (node_fit.h).
struct FitLimits {
  uint32_t min_first_point = 0;
  const char* refused = nullptr;
  uint32_t refused_from = 0;
  uint32_t point_modulus = 0;
  bool completion_only = false;
};
FitLimits fit_limits(Algo algo, uint32_t nodes);
// `opt` with what fit_limits allows of `algo` on `nodes` nodes.
FitOptions limited(FitOptions opt, Algo algo, uint32_t nodes);

// The value at x on the line through (x1, y1) and (x2, y2).
double on_line(double x1, double y1, double x2, double y2, double x);
// A time read off the line through (x1, t1) and (x2, t2): rounded, never
// below 0.
Picos time_on_line(double x1, Picos t1, double x2, Picos t2, double x);
// How far (x0, y0) lies from the line through the other two, as a fraction
// of y0 (0 when y0 is not positive): the check both fits make.
double off_line(double x0, double y0, double x1, double y1, double x2, double y2);

// The same plan with `segments` segments, its last one as long as the plan's.
Plan with_segments(const Plan& plan, uint32_t segments);

}  // namespace lanecast::algos::sim
