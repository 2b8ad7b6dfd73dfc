#include "algos/sim/segment_fit.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "algos/topology/circulant.h"

namespace lanecast::algos::sim {
double on_line(double x1, double y1, double x2, double y2, double x) { return y2 + (y2 - y1) * (x - x2) / (x2 - x1); }

double off_line(double x0, double y0, double x1, double y1, double x2, double y2) {
  return y0 > 0 ? std::fabs(on_line(x1, y1, x2, y2, x0) - y0) / y0 : 0;
}

namespace {

// A count or a time read off a line: rounded, never below 0.
template <class T>
T rounded_on_line(double x1, T y1, double x2, T y2, double x) {
  const double v = on_line(x1, static_cast<double>(y1), x2, static_cast<double>(y2), x);
  return v <= 0 ? T{0} : static_cast<T>(std::llround(v));
}

// Every rank's figure read off its own line.
template <class T>
std::vector<T> read_off(const std::vector<T>& at1, const std::vector<T>& at2, double s1, double s2, double s) {
  std::vector<T> out(at2.size());
  for (size_t i = 0; i < out.size(); ++i) out[i] = rounded_on_line(s1, at1[i], s2, at2[i], s);
  return out;
}

}  // namespace

Picos time_on_line(double x1, Picos t1, double x2, Picos t2, double x) { return rounded_on_line(x1, t1, x2, t2, x); }

FitLimits fit_limits(Algo algo, uint32_t nodes) {
  if (algo == Algo::Symmetric)
    return {0, "symmetric's time is not affine in the segment count from one segment per receiver on",
            nodes > 1 ? nodes - 1 : 1, 0, true};
  if (algo == Algo::ScatterAllgather) return {nodes, nullptr};
  if (algo == Algo::Circulant) return {0, nullptr, 0, topology::circulant_phase(nodes)};
  return {};
}

FitOptions limited(FitOptions opt, Algo algo, uint32_t nodes) {
  const FitLimits l = fit_limits(algo, nodes);
  opt.min_first_point = l.min_first_point;
  opt.refused = l.refused;
  opt.refused_from = l.refused_from;
  opt.completion_only = l.completion_only;
  opt.point_modulus = l.point_modulus;
  return opt;
}

Plan with_segments(const Plan& plan, uint32_t segments) {
  PlanParams p = plan.params();
  const uint64_t last = plan.segment(plan.segments() - 1).length;
  p.message_bytes = uint64_t{segments - 1} * p.segment_bytes + last;
  return Plan(p);
}

SimResult simulate_fitted(const Plan& plan, const PlanSimulation& simulate_plan, const FitOptions& opt,
                          SegmentFit* fit) {
  SegmentFit local;
  SegmentFit& f = fit != nullptr ? *fit : local;
  f = SegmentFit{};
  const uint64_t work = uint64_t{plan.nodes()} * plan.segments();
  if (opt.mode == FitOptions::Mode::Never) {
    f.why_not = "the reference was asked for";
    return simulate_plan(plan);
  }
  const bool wanted = opt.mode == FitOptions::Mode::Always || work > opt.min_work;
  if (opt.refused != nullptr && plan.segments() >= opt.refused_from) {
    f.why_not = opt.refused;
    f.refused = wanted;
    return simulate_plan(plan);
  }
  // A segment count moved up to the plan's modulo point_modulus.
  const auto in_phase = [&](uint64_t s) -> uint64_t {
    const uint64_t m = opt.point_modulus;
    return m > 1 ? s + (plan.segments() % m + m - s % m) % m : s;
  };
  uint32_t points[3] = {opt.points[0], opt.points[1], opt.points[2]};
  if (points[0] < opt.min_first_point) {
    const uint64_t k = (opt.min_first_point + uint64_t{points[0]} - 1) / points[0];
    for (uint32_t& s : points) s = static_cast<uint32_t>(std::min<uint64_t>(uint64_t{s} * k, UINT32_MAX));
  }
  for (uint32_t& s : points) s = static_cast<uint32_t>(std::min<uint64_t>(in_phase(s), UINT32_MAX));
  if (plan.segments() <= points[2]) {
    f.refused = wanted;
    f.why_not = std::to_string(plan.segments()) + " segments: no more than the fit simulates (" +
                std::to_string(points[2]) + (opt.min_first_point > opt.points[0] ? ", one piece per node at least)" : ")");
    return simulate_plan(plan);
  }
  if (opt.mode == FitOptions::Mode::Auto && work <= opt.min_work) {
    f.why_not = "small enough for the reference";
    return simulate_plan(plan);
  }
  // The three points, then - while the last three are off their line - one
  // more at twice the largest. A point at or past half the plan's segments
  // saves nothing over the reference: the climb stops before it.
  std::vector<uint32_t> at;
  std::vector<SimResult> runs;
  uint64_t events = 0;
  for (uint64_t next = points[0];;) {
    at.push_back(static_cast<uint32_t>(next));
    runs.push_back(simulate_plan(with_segments(plan, at.back())));
    events += runs.back().events;
    f.simulated = static_cast<uint32_t>(runs.size());
    if (!runs.back().complete) {
      f.refused = true;
      f.why_not = "at " + std::to_string(at.back()) + " segments the run did not complete (" + runs.back().problem + ")";
      return simulate_plan(plan);
    }
    const size_t n = at.size();
    if (n < 3) {
      next = points[n];
      continue;
    }
    for (int i = 0; i < 3; ++i) f.points[i] = at[n - 3 + i], f.times[i] = runs[n - 3 + i].completion;
    f.off_line = off_line(f.points[0], static_cast<double>(f.times[0]), f.points[1], static_cast<double>(f.times[1]),
                          f.points[2], static_cast<double>(f.times[2]));
    if (f.off_line <= opt.tolerance) break;
    next = in_phase(uint64_t{at.back()} * 2);
    if (!opt.climb || next > opt.max_point || 2 * next > plan.segments()) {
      char buf[200];
      std::snprintf(buf, sizeof buf, "not affine in the segment count: at %u segments %.2f%% off the line through %u and %u",
                    f.points[0], 100 * f.off_line, f.points[1], f.points[2]);
      f.why_not = buf;
      f.refused = true;
      return simulate_plan(plan);
    }
  }
  const SimResult* r = &runs[runs.size() - 3];
  const double s1 = f.points[1], s2 = f.points[2];
  const double s = plan.segments();
  f.used = true;
  if (opt.completion_only) {
    SimResult only;
    only.complete = true;
    only.completion = time_on_line(s1, f.times[1], s2, f.times[2], s);
    only.events = events;
    return only;
  }
  SimResult out = r[2];
  out.finish = read_off(r[1].finish, r[2].finish, s1, s2, s);
  out.last_receive = read_off(r[1].last_receive, r[2].last_receive, s1, s2, s);
  out.bytes_sent = read_off(r[1].bytes_sent, r[2].bytes_sent, s1, s2, s);
  out.bytes_received = read_off(r[1].bytes_received, r[2].bytes_received, s1, s2, s);
  out.frames_sent = read_off(r[1].frames_sent, r[2].frames_sent, s1, s2, s);
  out.lane_bytes_sent = read_off(r[1].lane_bytes_sent, r[2].lane_bytes_sent, s1, s2, s);
  out.multicast_lost = read_off(r[1].multicast_lost, r[2].multicast_lost, s1, s2, s);
  out.multicast_unposted = read_off(r[1].multicast_unposted, r[2].multicast_unposted, s1, s2, s);
  Picos last = 0;
  for (const Picos t : out.finish) last = std::max(last, t);
  out.completion = last;
  out.events = events;
  return out;
}

}  // namespace lanecast::algos::sim
