#include "algos/topology/form_hypercube.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <utility>

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
  std::vector<bool> seen(nodes, false);
  if (order.size() != nodes) throw std::invalid_argument("form_hypercube: start is not a permutation");
  for (Rank r : order) {
    if (r >= nodes || seen[r]) throw std::invalid_argument("form_hypercube: start is not a permutation");
    seen[r] = true;
  }
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

}  // namespace lanecast::algos::topology
