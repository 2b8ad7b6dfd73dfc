// Larger groups, cheaply: at a fixed message the simulated time of a
// tree-shaped broadcast is affine in log2 of the group size once its
// segments flow steadily - each doubling of the group adds one level to
// the tree, and a level costs the same fill time at any size (binomial and
// hypercube add one round of the whole message). So instead of simulating
// 65 536 nodes (whose state leaves the caches: about 1.3 M (node, segment)
// pairs per second on one core, against 4 M at 4096, and a bintree whose
// fill needs 2048-segment points), simulate the same message on p/64,
// p/32 and p/16 nodes - at most 4096 - fit the line in log2(nodes)
// through the two larger, check that the smallest lies on it, and read it
// at p. It is the segment fit's argument (segment_fit.h) turned on the
// other axis, and checked the same way.
//
// Only the completion is read off: per-rank figures of p nodes cannot come
// from smaller groups, so the result's per-rank vectors are empty.
// Algorithms whose time is not affine in log2(p) (linear and chain are
// affine in p, symmetric's tail grows with p, scatter + allgather's
// increments shrink, circulant's phase moves it up and down) are not tried; where a tried one's points are off the
// line, the caller's full plan runs.
//
// Pure: the simulations are the caller's (`simulate_at`), each of which may
// itself be fitted in the segment count.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "algos/plan.h"
#include "algos/registry.h"
#include "algos/sim/simulator.h"

namespace lanecast::algos::sim {

struct NodeFitOptions {
  bool enabled = true;
  // Groups larger than this are fitted (below it the segment fit is quick
  // enough: 4096 nodes take seconds).
  uint32_t min_nodes = 16384;
  // The largest group simulated, and the tolerance of the check (as the
  // segment fit's).
  uint32_t max_point = 4096;
  double tolerance = 0.001;
};

struct NodeFit {
  bool used = false;
  std::string why_not;    // when tried and not used
  uint32_t points[3]{};   // the group sizes simulated
  Picos times[3]{};
  double off_line = 0;    // the smallest point's distance from the line, a fraction of its time
};

// Whether `algo`'s time is affine in log2(nodes) at a fixed message: the
// trees (binomial, binary, bintree, hypercube, multilane). Not circulant:
// its rounds are the segments plus ceil(log2 p), but where the segment
// count falls in its phase moves its time up and down (64 MiB: 53 810 us on
// 256 nodes, 53 796 on 512; 53 938 on 2048, 53 902 on 4096).
bool depth_affine(Algo algo);

// The plan's result read off the line (NodeFit::used), or - when the fit
// does not apply or its check fails - an empty result with used false: the
// caller then runs its own way. `simulate_at` runs the same broadcast on a
// group of plan.nodes() / 2^k.
SimResult simulate_node_fitted(Algo algo, const Plan& plan, const std::function<SimResult(const Plan&)>& simulate_at,
                               const NodeFitOptions& opt, NodeFit* fit);

// The same plan on `nodes` nodes (its root kept if it is one of them, else 0).
Plan with_nodes(const Plan& plan, uint32_t nodes);

}  // namespace lanecast::algos::sim
