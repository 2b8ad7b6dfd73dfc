#include "algos/sim/node_fit.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "algos/sim/segment_fit.h"

namespace lanecast::algos::sim {

NodeFitShape node_fit_shape(Algo algo) {
  using Axis = NodeFitShape::Axis;
  switch (algo) {
    case Algo::Binomial:
    case Algo::Binary:
    case Algo::Bintree:
    case Algo::Hypercube:
    case Algo::Multilane:
      return {Axis::Log2, 16384, 16, 4096, false};
    case Algo::Circulant:
      return {Axis::Log2, 2048, 16, 1024, true};
    case Algo::ScatterAllgather:
      return {Axis::Scaled, 16384, 8, 8192, false};
    default:
      return {};
  }
}

Plan with_nodes(const Plan& plan, uint32_t nodes) {
  PlanParams p = plan.params();
  p.nodes = nodes;
  if (p.root >= nodes) p.root = 0;
  return Plan(p);
}

SimResult simulate_node_fitted(Algo algo, const Plan& plan, const std::function<SimResult(const Plan&)>& simulate_at,
                               const NodeFitOptions& opt, NodeFit* fit) {
  NodeFit local;
  NodeFit& f = fit != nullptr ? *fit : local;
  f = NodeFit{};
  const NodeFitShape shape = node_fit_shape(algo);
  const uint32_t p = plan.nodes();
  const uint32_t min_nodes = opt.min_nodes != 0 ? opt.min_nodes : shape.min_nodes;
  if (!opt.enabled || p <= min_nodes || shape.axis == NodeFitShape::Axis::None) return {};
  const bool scaled = shape.axis == NodeFitShape::Axis::Scaled;
  // p/4d, p/2d, p/d, halved until the largest is at most max_point: the
  // same fraction of a power of two as p, so each doubling adds one level.
  uint32_t largest = p / shape.divisor;
  while (largest > shape.max_point) largest /= 2;
  const uint32_t pts[3] = {largest / 4, largest / 2, largest};
  if (pts[0] < 4) {
    f.why_not = "too few nodes for three smaller groups";
    return {};
  }
  for (int i = 0; i < 3; ++i) {
    f.points[i] = pts[i];
    Plan smaller = with_nodes(plan, pts[i]);
    if (scaled) {
      // The plan's segments per node, rounded, at least one segment.
      const double per_node = static_cast<double>(plan.segments()) / p;
      const auto s = static_cast<uint32_t>(std::max(1.0, std::round(per_node * pts[i])));
      smaller = with_segments(smaller, s);
    }
    f.segments[i] = smaller.segments();
    const SimResult r = simulate_at(smaller);
    if (!r.complete) {
      f.why_not = "on " + std::to_string(pts[i]) + " nodes the run did not complete (" + r.problem + ")";
      return {};
    }
    f.times[i] = r.completion;
  }
  const auto x = [&](double nodes) { return scaled ? nodes : std::log2(nodes); };
  // The line through points a and b; point c checked against it.
  const int a = shape.chord ? 0 : 1, b = 2, c = shape.chord ? 1 : 0;
  const double xa = x(pts[a]), xb = x(pts[b]);
  const double ta = static_cast<double>(f.times[a]), tb = static_cast<double>(f.times[b]);
  f.off_line = off_line(x(pts[c]), static_cast<double>(f.times[c]), xa, ta, xb, tb);
  if (!(f.off_line <= opt.tolerance)) {
    char buf[200];
    std::snprintf(buf, sizeof buf, "not affine in %s: on %u nodes %.2f%% off the line through %u and %u",
                  scaled ? "the group size at a fixed message per node" : "log2 of the group size", pts[c],
                  100 * f.off_line, pts[a], pts[b]);
    f.why_not = buf;
    return {};
  }
  SimResult out;
  out.complete = true;
  out.completion = time_on_line(xa, f.times[a], xb, f.times[b], x(static_cast<double>(p)));
  f.used = true;
  return out;
}

}  // namespace lanecast::algos::sim
