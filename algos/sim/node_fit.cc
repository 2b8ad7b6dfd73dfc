#include "algos/sim/node_fit.h"

#include <cmath>
#include <cstdio>

#include "algos/sim/segment_fit.h"

namespace lanecast::algos::sim {

bool depth_affine(Algo algo) {
  switch (algo) {
    case Algo::Binomial:
    case Algo::Binary:
    case Algo::Bintree:
    case Algo::Hypercube:
    case Algo::Multilane:
      return true;
    default:
      return false;
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
  const uint32_t p = plan.nodes();
  if (!opt.enabled || p <= opt.min_nodes || !depth_affine(algo)) return {};
  // p/64, p/32, p/16, halved until the largest is at most max_point: the
  // same fraction of a power of two as p, so each doubling adds one level.
  uint32_t largest = p / 16;
  while (largest > opt.max_point) largest /= 2;
  const uint32_t pts[3] = {largest / 4, largest / 2, largest};
  if (pts[0] < 4) {
    f.why_not = "too few nodes for three smaller groups";
    return {};
  }
  for (int i = 0; i < 3; ++i) {
    f.points[i] = pts[i];
    const SimResult r = simulate_at(with_nodes(plan, pts[i]));
    if (!r.complete) {
      f.why_not = "on " + std::to_string(pts[i]) + " nodes the run did not complete (" + r.problem + ")";
      return {};
    }
    f.times[i] = r.completion;
  }
  const double x1 = std::log2(pts[1]), x2 = std::log2(pts[2]);
  const double t1 = static_cast<double>(f.times[1]), t2 = static_cast<double>(f.times[2]);
  f.off_line = off_line(std::log2(pts[0]), static_cast<double>(f.times[0]), x1, t1, x2, t2);
  if (!(f.off_line <= opt.tolerance)) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "not affine in log2 of the group size: on %u nodes %.2f%% off the line through %u and %u",
                  pts[0], 100 * f.off_line, pts[1], pts[2]);
    f.why_not = buf;
    return {};
  }
  SimResult out;
  out.complete = true;
  const double t = on_line(x1, t1, x2, t2, std::log2(static_cast<double>(p)));
  out.completion = t <= 0 ? 0 : static_cast<Picos>(std::llround(t));
  f.used = true;
  return out;
}

}  // namespace lanecast::algos::sim
