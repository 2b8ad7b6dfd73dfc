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
//
// Everything below form_hypercube() is lanecast's addition beyond the paper.
// Figueira's criterion (the largest latency inside a subcube) is a proxy for the
// broadcast time: it ignores that a node sends the whole message to its
// partners one after the other, and which step crosses the slow links. On
// random islands it sometimes leaves the order worse than identifier order
// (16 nodes, 2 islands, seed 45 of Claims.FormHypercube*: form-double 46%
// slower). So lanecast predicts the broadcast's completion exactly with a cost
// model of the machine (predicted_hypercube_time) and keeps, of the identity
// and Figueira's four variants, the order it predicts fastest
// (form_hypercube_best), optionally refined by swaps the model accepts.
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

// lanecast: the completion time of the hypercube broadcast (algos/hypercube.h)
// in `order` from rank `root`, as the simulator (algos/sim) runs it on an
// uncontended switch: ids by XOR with the root's position when p is a power of
// two, by rotation otherwise; a node forwards once it holds the whole message
// (store and forward), the whole message to each partner in step order on one
// port, so its j-th partner (from 1) holds it j * hop_cost + latency[node][partner]
// after the node did. hop_cost: the port time of the whole message (every
// frame's serialisation; the pipelining of frames within a hop is exact: the
// last frame arrives one latency after it left). Completion: the latest of
// every node's receipt and every sender's last frame leaving its port. Any
// unit, as long as latency and hop_cost share it. Throws std::invalid_argument
// on a matrix of the wrong size, an order that is not a permutation, or a root
// outside the group.
double predicted_hypercube_time(std::span<const Rank> order, std::span<const double> latency,
                                double hop_cost, Rank root = 0);

struct FormBestOptions {
  Rank root = 0;
  // lanecast: after the paper's variants, try swapping every two positions of
  // each candidate and keep a swap that lowers the predicted completion (or
  // keeps it and lowers the sum of the nodes' receipt times, to cross
  // plateaus), until no swap helps. Never raises the prediction.
  bool refine = true;
  // Cost-model node visits the refinement may spend over all candidates, the
  // best predicted first (a count, not a clock: the result is deterministic);
  // p^3 / 2 per sweep of one candidate (p = 16: 2048; p = 256: 8.4 million;
  // p = 1024: 537 million, so the default, about 1.5 s there, covers half a
  // sweep of the best candidate).
  uint64_t refine_budget = uint64_t{1} << 28;
};

struct FormBest {
  std::vector<Rank> order;
  double predicted = 0;        // predicted_hypercube_time(order, ...)
  const char* variant = "id";  // the candidate it came from: id, form-double, form1, form2, form3
  bool refined = false;        // the swap refinement changed it
};

// lanecast: the order among the identity and Figueira's variants (form-double,
// form1, form2, form3, each from the identity, passes untouched) with the
// lowest predicted_hypercube_time, refined when options.refine; ties go to the
// lower sum of receipt times, then to the earlier candidate in that list. Never
// predicted slower than identifier order. Throws like form_hypercube() and
// predicted_hypercube_time().
FormBest form_hypercube_best(uint32_t nodes, std::span<const double> latency, double hop_cost,
                             const FormBestOptions& options = {});

}  // namespace lanecast::algos::topology
