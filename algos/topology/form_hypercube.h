// form-hypercube: Figueira's latency-aware ordering of the nodes of a hypercube
// broadcast (S. M. Figueira, "Using a Hypercube Algorithm for Broadcasting in
// Internet-Based Clusters", PDPTA 2000). The plan knows no latencies, so this is
// a pure helper that turns a latency matrix into an order (position -> rank),
// which make_hypercube() takes.
//
// A pass at dimension k looks at the subcubes of 2^k consecutive positions and
// swaps units of 2^u positions (u < k; u = 0: single nodes) between two
// subcubes whenever the swap brings BOTH subcubes' maximum internal latency
// below the pair's previous maximum, until no swap helps. The maximum subcube
// latency of dimension k therefore never increases. Single versions: one pass
// at k = 1, 2 or 3 (units of single nodes). The double version: k = 1, then
// k = 2 moving the pairs the first pass formed (units of 2) — single nodes
// alone cannot regroup two interleaved islands inside a subcube of four.
// A partial last subcube (p not a power of two) takes part with its whole units.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "algos/types.h"

namespace lanecast::algos::topology {

struct FormPass {
  uint32_t dim;       // subcubes of 2^dim positions
  uint32_t unit_dim;  // swapped units of 2^unit_dim positions (< dim)
};

inline std::vector<FormPass> form_single(uint32_t dim) { return {{dim, 0}}; }
inline std::vector<FormPass> form_double() { return {{1, 0}, {2, 1}}; }

// latency: nodes * nodes, row-major, latency[a * nodes + b] from rank a to b.
// start: the order to improve (empty: identity). Throws std::invalid_argument on
// a matrix of the wrong size, a start that is not a permutation, or a pass with
// unit_dim >= dim.
std::vector<Rank> form_hypercube(uint32_t nodes, std::span<const double> latency,
                                 std::span<const FormPass> passes, std::vector<Rank> start = {});

// The largest latency between two ranks of one subcube of 2^dim positions.
double max_subcube_latency(std::span<const Rank> order, std::span<const double> latency,
                           uint32_t dim);

}  // namespace lanecast::algos::topology
