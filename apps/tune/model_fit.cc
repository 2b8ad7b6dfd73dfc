#include "apps/tune/model_fit.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

#include "apps/common/json_output.h"
#include "apps/common/options.h"
#include "apps/common/subprocess.h"
#include "apps/tune/lanecast_run.h"

namespace lanecast::apps {
namespace {

std::string number(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

// Four significant digits: what the rules' comments print is what was used.
double four_digits(double v) {
  if (v <= 0) return v;
  const double scale = std::pow(10.0, 3 - std::floor(std::log10(v)));
  return std::round(v * scale) / scale;
}

std::vector<uint64_t> sizes_of(const TimeTable& t) {
  std::vector<uint64_t> s;
  for (const auto& [size, at] : t) s.push_back(size);
  return s;
}

std::vector<std::string> algos_of(const TimeTable& t) {
  std::vector<std::string> a;
  for (const auto& [size, at] : t)
    for (const auto& [name, us] : at)
      if (std::find(a.begin(), a.end(), name) == a.end()) a.push_back(name);
  std::sort(a.begin(), a.end());
  return a;
}

// Squared log error over the (size, algorithm) pairs both tables hold, at
// `sizes`: a factor of two off weighs the same at 2 bytes as at 8 MiB. An
// algorithm plan cannot finish is missing from `predicted`, not counted.
double log_error(const TimeTable& measured, const TimeTable& predicted, const std::vector<uint64_t>& sizes) {
  double e = 0;
  for (const uint64_t size : sizes) {
    const auto m = measured.find(size), p = predicted.find(size);
    if (m == measured.end() || p == predicted.end()) continue;
    for (const auto& [algo, us] : m->second) {
      const auto q = p->second.find(algo);
      if (q == p->second.end() || us <= 0 || q->second <= 0) continue;
      const double d = std::log(q->second / us);
      e += d * d;
    }
  }
  return e;
}

// The rate: chain's marginal rate between the two largest sizes, else the
// fastest algorithm's; with one size only, the fastest algorithm's average
// rate (a lower bound: it includes the start).
double fit_rate(const TimeTable& m, std::string* how) {
  const std::vector<uint64_t> sizes = sizes_of(m);
  if (sizes.empty()) throw std::runtime_error("nothing measured to fit the model to");
  const uint64_t big = sizes.back();
  if (sizes.size() == 1) {
    double best = 0;
    for (const auto& [algo, us] : m.at(big)) best = std::max(best, static_cast<double>(big) / us);
    if (best <= 0) throw std::runtime_error("no time measured to fit a rate to");
    *how = "the fastest algorithm's average rate at " + format_size(big) + " (one size measured: a lower bound)";
    return best;
  }
  const uint64_t small = sizes[sizes.size() - 2];
  const auto marginal = [&](const std::string& algo) -> double {
    const auto a = m.at(small).find(algo), b = m.at(big).find(algo);
    if (a == m.at(small).end() || b == m.at(big).end() || b->second <= a->second) return 0;
    return static_cast<double>(big - small) / (b->second - a->second);
  };
  const std::string span = format_size(small) + " to " + format_size(big);
  if (const double chain = marginal("chain"); chain > 0) {
    *how = "chain's marginal rate from " + span + " (the bytes between over the time between)";
    return chain;
  }
  double best = 0;
  std::string which;
  for (const auto& [algo, us] : m.at(big))
    if (const double r = marginal(algo); r > best) best = r, which = algo;
  if (best <= 0)
    throw std::runtime_error("no algorithm took longer at " + format_size(big) + " than at " +
                             format_size(small) + ": no rate to fit");
  *how = which + "'s marginal rate from " + span + " (chain not measured: the fastest algorithm's)";
  return best;
}

}  // namespace

std::vector<std::string> ModelParams::plan_args() const {
  return {"--bw",      number("%.6g", bw_mbytes), "--t0", number("%.6g", t0_us), "--segment", std::to_string(segment),
          "--port-burst", std::to_string(burst_bytes)};
}

ModelFit fit_model(const TimeTable& measured, uint32_t segment, const Predictor& predict) {
  ModelFit f;
  const std::vector<uint64_t> sizes = sizes_of(measured);
  const std::vector<std::string> algos = algos_of(measured);
  f.params.segment = segment;
  f.how.push_back("segment " + std::to_string(segment) + " B: as the group resolved it");

  std::string rate_how;
  f.params.bw_mbytes = four_digits(fit_rate(measured, &rate_how));
  f.how.push_back("rate " + number("%.6g", f.params.bw_mbytes) + " MB/s: " + rate_how);

  const auto error_at = [&](const std::vector<uint64_t>& at) {
    ++f.predictions;
    return log_error(measured, predict(f.params, algos, at), at);
  };

  // t0 lies between 0 and the fastest time at the smallest size (every
  // transfer takes at least t0). The error is close to convex in t0: a
  // golden-section search to a tenth of a microsecond or 0.1%.
  const std::vector<uint64_t> smallest = {sizes.front()};
  double hi = std::numeric_limits<double>::infinity();
  for (const auto& [algo, us] : measured.at(sizes.front())) hi = std::min(hi, us);
  if (!std::isfinite(hi) || hi <= 0) throw std::runtime_error("no time at the smallest size to fit t0 to");
  const auto fit_t0 = [&] {
    constexpr double kGolden = 0.6180339887498949;
    double a = 0, b = hi;
    const auto at = [&](double t0) {
      f.params.t0_us = t0;
      return error_at(smallest);
    };
    double x1 = b - kGolden * (b - a), x2 = a + kGolden * (b - a);
    double e1 = at(x1), e2 = at(x2);
    for (int i = 0; i < 40 && b - a > std::max(0.1, 1e-3 * hi); ++i) {
      if (e1 <= e2) {
        b = x2, x2 = x1, e2 = e1;
        x1 = b - kGolden * (b - a);
        e1 = at(x1);
      } else {
        a = x1, x1 = x2, e1 = e2;
        x2 = a + kGolden * (b - a);
        e2 = at(x2);
      }
    }
    f.params.t0_us = std::round((e1 <= e2 ? x1 : x2) * 10) / 10;
  };
  fit_t0();

  // The bucket, in whole frames, where the larger sizes say (with one size,
  // that one).
  std::vector<uint64_t> larger(sizes.begin() + (sizes.size() > 1 ? 1 : 0), sizes.end());
  uint64_t best_burst = 0;
  double best_error = std::numeric_limits<double>::infinity();
  for (const uint32_t frames : {0u, 1u, 2u, 3u, 4u, 6u, 8u, 12u, 16u, 24u, 32u, 48u, 64u}) {
    f.params.burst_bytes = uint64_t{frames} * segment;
    // Ties go to the smaller bucket: no bucket unless one explains something.
    if (const double e = error_at(larger); e < best_error * (1 - 1e-9)) best_error = e, best_burst = f.params.burst_bytes;
  }
  f.params.burst_bytes = best_burst;
  fit_t0();
  f.how.push_back("t0 " + number("%.6g", f.params.t0_us) + " us: the least squared log error of every algorithm at the smallest size, " +
                  format_size(sizes.front()));
  f.how.push_back("port bucket " + std::to_string(best_burst) + " B (" + std::to_string(best_burst / segment) +
                  " frames): the least squared log error of every algorithm at " +
                  (larger.size() == 1 ? format_size(larger.front()) : "the sizes from " + format_size(larger.front()) + " up") +
                  ", over 0 to 64 frames");

  ++f.predictions;
  f.predicted = predict(f.params, algos, sizes);
  return f;
}

Predictor plan_predictor(const std::string& program, uint32_t nodes) {
  return [program, nodes](const ModelParams& p, const std::vector<std::string>& algos,
                          const std::vector<uint64_t>& sizes) {
    Argv argv{program, "plan", "--algo", algos.size() == 1 ? algos.front() : "all", "--nodes", std::to_string(nodes),
              "--size", size_list_text(sizes), "--json", "--quiet"};
    for (const std::string& a : p.plan_args()) argv.push_back(a);
    // Exit 1: some broadcast did not complete (its row says so); the others stand.
    const Json j = Json::parse(run_lanecast(argv, nullptr, "", std::chrono::minutes(30), /*exit1_ok=*/true), nullptr,
                               /*allow_exceptions=*/false);
    if (!j.is_array()) throw std::runtime_error(command_line(argv) + ": printed no JSON array");
    TimeTable t;
    for (const Json& row : j) {
      const std::string algo = row.value("algo", std::string());
      if (!row.value("complete", false) || std::find(algos.begin(), algos.end(), algo) == algos.end()) continue;
      t[row.at("size").get<uint64_t>()][algo] = row.at("predicted_us").get<double>();
    }
    return t;
  };
}

}  // namespace lanecast::apps
