#include "algos/topology/form_hypercube.h"

#include <algorithm>
#include <bit>
#include <numeric>
#include <stdexcept>
#include <utility>

#include "algos/topology/hypercube.h"

namespace lanecast::algos::topology {
namespace {

// The largest latency (either direction) between two ranks at positions [b, e).
double block_max(std::span<const Rank> order, std::span<const double> lat, uint32_t n, uint32_t b,
                 uint32_t e) {
  double m = 0;
  for (uint32_t i = b; i < e; ++i)
    for (uint32_t j = i + 1; j < e; ++j)
      m = std::max({m, lat[size_t{order[i]} * n + order[j]], lat[size_t{order[j]} * n + order[i]]});
  return m;
}

void swap_units(std::vector<Rank>& order, uint32_t a, uint32_t b, uint32_t len) {
  for (uint32_t i = 0; i < len; ++i) std::swap(order[a + i], order[b + i]);
}

void pass(std::vector<Rank>& order, std::span<const double> lat, uint32_t n, FormPass fp) {
  const uint32_t cube = 1u << fp.dim, unit = 1u << fp.unit_dim;
  const uint32_t cubes = (n + cube - 1) / cube;
  auto end_of = [&](uint32_t c) { return std::min(n, (c + 1) * cube); };
  std::vector<double> maxima(cubes);
  for (uint32_t c = 0; c < cubes; ++c) maxima[c] = block_max(order, lat, n, c * cube, end_of(c));
  for (uint32_t sweep = 0; sweep < 1000; ++sweep) {
    bool swapped = false;
    for (uint32_t a = 0; a < cubes; ++a)
      for (uint32_t b = a + 1; b < cubes; ++b)
        for (uint32_t ua = a * cube; ua + unit <= end_of(a); ua += unit)
          for (uint32_t ub = b * cube; ub + unit <= end_of(b); ub += unit) {
            const double before = std::max(maxima[a], maxima[b]);
            swap_units(order, ua, ub, unit);
            const double ma = block_max(order, lat, n, a * cube, end_of(a));
            const double mb = block_max(order, lat, n, b * cube, end_of(b));
            if (ma < before && mb < before) {
              maxima[a] = ma;
              maxima[b] = mb;
              swapped = true;
            } else {
              swap_units(order, ua, ub, unit);  // undo
            }
          }
    if (!swapped) return;
  }
}

void check_permutation(std::span<const Rank> order, uint32_t n, const char* what) {
  std::vector<bool> seen(n, false);
  if (order.size() != n) throw std::invalid_argument(what);
  for (Rank r : order) {
    if (r >= n || seen[r]) throw std::invalid_argument(what);
    seen[r] = true;
  }
}

// lanecast's cost model (predicted_hypercube_time), unchecked. The tree of
// algos/topology/hypercube.h: a parent's id is below its children's, so one
// pass in id order sees every node's receipt time before its children's.
struct Cost {
  double completion = 0;
  double total = 0;  // sum of the receipt times: the refinement's tie-break
  bool operator<(const Cost& o) const {
    return completion < o.completion || (completion == o.completion && total < o.total);
  }
};

class CostModel {
 public:
  CostModel(std::span<const double> lat, uint32_t n, double hop) : lat_(lat), n_(n), hop_(hop), t_(n) {}

  Cost operator()(std::span<const Rank> order, Rank root) {
    uint32_t root_pos = 0;
    while (order[root_pos] != root) ++root_pos;
    const bool pow2 = std::has_single_bit(n_);
    auto rank_of_id = [&](uint32_t v) { return order[pow2 ? v ^ root_pos : (v + root_pos) % n_]; };
    Cost c;
    t_[0] = 0;
    for (uint32_t v = 0; v < n_; ++v) {
      const size_t row = size_t{rank_of_id(v)} * n_;
      HypercubeChildren kids;
      const uint32_t sent = hypercube_children(v, n_, kids);
      for (uint32_t j = 0; j < sent; ++j)
        t_[kids[j]] = t_[v] + (j + 1) * hop_ + lat_[row + rank_of_id(kids[j])];
      c.completion = std::max(c.completion, t_[v] + sent * hop_);
      c.total += t_[v];
    }
    return c;
  }

 private:
  std::span<const double> lat_;
  uint32_t n_;
  double hop_;
  std::vector<double> t_;  // receipt time per id
};

// lanecast's refinement (FormBestOptions::refine): first-improvement swaps of
// two positions, sweep after sweep, until a sweep changes nothing or `budget`
// (node visits of the cost model, spent as it goes) runs out. Returns whether
// it changed `order`.
bool refine(std::vector<Rank>& order, Rank root, CostModel& model, Cost& cost, uint64_t& budget) {
  const uint32_t n = static_cast<uint32_t>(order.size());
  bool changed = false;
  for (bool improved = true; improved;) {
    improved = false;
    for (uint32_t i = 0; i < n; ++i)
      for (uint32_t j = i + 1; j < n; ++j) {
        if (budget < n) return changed;
        budget -= n;
        std::swap(order[i], order[j]);
        const Cost c = model(order, root);
        if (c < cost) {
          cost = c;
          improved = changed = true;
        } else {
          std::swap(order[i], order[j]);
        }
      }
  }
  return changed;
}

}  // namespace

std::vector<Rank> form_hypercube(uint32_t nodes, std::span<const double> latency,
                                 std::span<const FormPass> passes, std::vector<Rank> start) {
  if (latency.size() != size_t{nodes} * nodes)
    throw std::invalid_argument("form_hypercube: the latency matrix must be nodes x nodes");
  std::vector<Rank> order = std::move(start);
  if (order.empty()) {
    order.resize(nodes);
    std::iota(order.begin(), order.end(), Rank{0});
  }
  check_permutation(order, nodes, "form_hypercube: start is not a permutation");
  for (const FormPass& fp : passes) {
    if (fp.unit_dim >= fp.dim || fp.dim >= 31)
      throw std::invalid_argument("form_hypercube: a pass needs unit_dim < dim < 31");
    pass(order, latency, nodes, fp);
  }
  return order;
}

double max_subcube_latency(std::span<const Rank> order, std::span<const double> latency,
                           uint32_t dim) {
  const uint32_t n = static_cast<uint32_t>(order.size()), cube = 1u << dim;
  double m = 0;
  for (uint32_t b = 0; b < n; b += cube) m = std::max(m, block_max(order, latency, n, b, std::min(n, b + cube)));
  return m;
}

double predicted_hypercube_time(std::span<const Rank> order, std::span<const double> latency,
                                double hop_cost, Rank root) {
  const uint32_t n = static_cast<uint32_t>(order.size());
  if (latency.size() != size_t{n} * n)
    throw std::invalid_argument("predicted_hypercube_time: the latency matrix must be nodes x nodes");
  check_permutation(order, n, "predicted_hypercube_time: the order is not a permutation");
  if (root >= n) throw std::invalid_argument("predicted_hypercube_time: the root is outside the group");
  CostModel model(latency, n, hop_cost);
  return model(order, root).completion;
}

FormBest form_hypercube_best(uint32_t nodes, std::span<const double> latency, double hop_cost,
                             const FormBestOptions& options) {
  if (latency.size() != size_t{nodes} * nodes)
    throw std::invalid_argument("form_hypercube_best: the latency matrix must be nodes x nodes");
  if (options.root >= nodes) throw std::invalid_argument("form_hypercube_best: the root is outside the group");
  struct Candidate {
    const char* name;
    std::vector<FormPass> passes;
    std::vector<Rank> order;
    Cost cost;
    bool refined = false;
  };
  std::vector<Candidate> cands;
  cands.push_back({"id", {}, {}, {}});
  cands.push_back({"form-double", form_double(), {}, {}});
  cands.push_back({"form1", form_single(1), {}, {}});
  cands.push_back({"form2", form_single(2), {}, {}});
  cands.push_back({"form3", form_single(3), {}, {}});
  CostModel model(latency, nodes, hop_cost);
  for (Candidate& c : cands) {
    c.order = form_hypercube(nodes, latency, c.passes);
    c.cost = model(c.order, options.root);
  }
  // lanecast's refinement, the most promising candidate first: with a small
  // group every candidate is refined to the end, with a large one the budget
  // goes where it helps most. A candidate equal to an earlier one is skipped
  // (same start, same result).
  if (options.refine) {
    std::vector<size_t> by_cost(cands.size());
    std::iota(by_cost.begin(), by_cost.end(), size_t{0});
    std::stable_sort(by_cost.begin(), by_cost.end(),
                     [&](size_t a, size_t b) { return cands[a].cost < cands[b].cost; });
    uint64_t budget = options.refine_budget;
    std::vector<std::vector<Rank>> tried;
    for (size_t i : by_cost) {
      Candidate& c = cands[i];
      if (std::find(tried.begin(), tried.end(), c.order) != tried.end()) continue;
      tried.push_back(c.order);
      c.refined = refine(c.order, options.root, model, c.cost, budget);
    }
  }
  const Candidate* best = &cands[0];
  for (const Candidate& c : cands)
    if (c.cost < best->cost) best = &c;
  return FormBest{best->order, best->cost.completion, best->name, best->refined};
}

}  // namespace lanecast::algos::topology
