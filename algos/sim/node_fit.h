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
// Two algorithms that cut the message by the group are read another way
// (node_fit_shape):
//  - circulant's rounds are the segments plus ceil(log2 p), so its time is
//    affine in log2(p) too, but where the segment count falls in its phase
//    moves each group's time up or down by a few tens of microseconds (at
//    64 MiB: 53 810 us on 256 nodes, 53 796 on 512, 53 850 on 1024). The
//    line is drawn through the smallest and the largest point, the widest
//    base, and the middle one is checked against it; its points are at most
//    1024 nodes, where the segment fit reads each group in a second.
//  - scatter + allgather cuts the message into one piece per node, so its
//    shape is set by the segments per node. Its points keep that ratio: on
//    p/32, p/16 and p/8 nodes (at most 8192) the message is cut by the same
//    factor, and the time is read off the line in the group size (at a fixed
//    piece, every node sends and receives the whole message once per phase:
//    the time grows with the message, that is with p).
// Linear and chain are affine in p and fast (a few seconds at 65 536), and
// symmetric is fitted in its segment count where it is fitted at all
// (segment_fit.h): none of the three is tried.
//
// Only the completion is read off: per-rank figures of p nodes cannot come
// from smaller groups, so the result's per-rank vectors are empty. Where
// the check fails the caller's full plan runs.
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
  // Groups larger than this are fitted; 0: the algorithm's own threshold
  // (NodeFitShape::min_nodes).
  uint32_t min_nodes = 0;
  // The checked point's distance from the line, a fraction of its time,
  // that still counts as on it (as the segment fit's).
  double tolerance = 0.001;
};

// How the group-size fit reads an algorithm.
struct NodeFitShape {
  enum class Axis : uint8_t {
    None,    // not fitted
    Log2,    // the same message on smaller groups; the line in log2(nodes)
    Scaled,  // the message cut with the group (segments per node kept); the line in nodes
  };
  Axis axis = Axis::None;
  // Groups larger than this are fitted by default: below it the segment fit
  // is quick enough (the trees: 4096 nodes take seconds; circulant's climb
  // ends off its line from 4096 nodes and the plan then runs in full, 77 s).
  uint32_t min_nodes = 16384;
  uint32_t divisor = 16;      // the largest point is p / divisor, halved until at most max_point
  uint32_t max_point = 4096;  // the points are largest/4, largest/2, largest
  bool chord = false;         // the line through the outer two points, the middle one checked
                              // (else through the two larger, the smallest checked)
};
NodeFitShape node_fit_shape(Algo algo);

struct NodeFit {
  bool used = false;
  std::string why_not;    // when tried and not used
  uint32_t points[3]{};   // the group sizes simulated
  uint32_t segments[3]{}; // their segment counts (the plan's, unless the shape scales the message)
  Picos times[3]{};
  double off_line = 0;    // the checked point's distance from the line, a fraction of its time
};

// The plan's result read off the line (NodeFit::used), or - when the fit
// does not apply or its check fails - an empty result with used false: the
// caller then runs its own way. `simulate_at` runs the same broadcast on a
// smaller group (and, for a Scaled shape, a shorter message).
SimResult simulate_node_fitted(Algo algo, const Plan& plan, const std::function<SimResult(const Plan&)>& simulate_at,
                               const NodeFitOptions& opt, NodeFit* fit);

// The same plan on `nodes` nodes (its root kept if it is one of them, else 0).
Plan with_nodes(const Plan& plan, uint32_t nodes);

}  // namespace lanecast::algos::sim
