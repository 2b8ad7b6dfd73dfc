#include "algos/registry.h"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>

#include "algos/binary.h"
#include "algos/binomial.h"
#include "algos/bintree.h"
#include "algos/chain.h"
#include "algos/circulant.h"
#include "algos/hypercube.h"
#include "algos/linear.h"
#include "algos/mcast_chain.h"
#include "algos/multilane.h"
#include "algos/pipeline.h"
#include "algos/scatter_allgather.h"
#include "algos/symmetric.h"

namespace lanecast::algos {
namespace {

using Factory = std::unique_ptr<Machine> (*)(const Plan&, Rank);
using ArenaFactory = MachinePtr (*)(const Plan&, Rank, MachineArena&);
using ArenaBytes = size_t (*)(uint32_t nodes, uint32_t max_segments);

struct Entry {
  AlgoInfo info;
  Factory make;
  ArenaFactory make_in;  // the same machine in an arena
  ArenaBytes bytes;      // what make_in needs at most (the registered options)
};

constexpr std::array kAlgos{
    Entry{{Algo::Linear, "linear", "root sends every segment to every rank (MPI linear baseline)"},
          &make_linear, &make_linear, &linear_arena_bytes},
    Entry{{Algo::Binomial, "binomial",
           "MPI binomial tree, store-and-forward of the whole message"},
          &make_binomial, &make_binomial, &binomial_arena_bytes},
    Entry{{Algo::Chain, "chain", "pipelined chain (Happe & Vinter's segmented seqtree)"},
          &make_chain, &make_chain, &pipeline_arena_bytes},
    Entry{{Algo::Binary, "binary", "pipelined binary tree"}, &make_binary, &make_binary, &pipeline_arena_bytes},
    Entry{{Algo::Bintree, "bintree",
           "two binary trees, alternating segments (Happe & Vinter's segmented bintree)"},
          &make_bintree, &make_bintree, &pipeline_arena_bytes},
    Entry{{Algo::Symmetric, "symmetric",
           "one piece per receiver, then every receiver to all (Juhasz, constant in p)"},
          static_cast<Factory>(&make_symmetric), static_cast<ArenaFactory>(&make_symmetric),
          &symmetric_arena_bytes},
    Entry{{Algo::ScatterAllgather, "scatter_allgather",
           "binomial scatter, then ring or recursive-doubling allgather (van de Geijn)"},
          static_cast<Factory>(&make_scatter_allgather), static_cast<ArenaFactory>(&make_scatter_allgather),
          [](uint32_t n, uint32_t m) { return scatter_allgather_arena_bytes(n, m); }},
    Entry{{Algo::Hypercube, "hypercube",
           "dimension-ordered hypercube, store-and-forward (Figueira; form order with a group shape)"},
          static_cast<Factory>(&make_hypercube), static_cast<ArenaFactory>(&make_hypercube),
          [](uint32_t n, uint32_t m) { return hypercube_arena_bytes(n, m); }},
    Entry{{Algo::Multilane, "multilane",
           "two trees on two lanes, halves swapped at the leaves, chained across sites (a group shape's)"},
          static_cast<Factory>(&make_multilane), static_cast<ArenaFactory>(&make_multilane),
          [](uint32_t n, uint32_t m) { return multilane_arena_bytes(n, m); }},
    Entry{{Algo::McastChain, "mcast_chain",
           "root multicasts every segment, a reliable ring repairs losses (Hoefler, Siebert & Rehm)"},
          &make_mcast_chain, &make_mcast_chain, &mcast_chain_arena_bytes},
    Entry{{Algo::Circulant, "circulant",
           "round-optimal schedule on a circulant graph: n-1+log2(p) rounds (Traff; MPICH 4 circ_graph)"},
          static_cast<Factory>(&make_circulant), static_cast<ArenaFactory>(&make_circulant), &circulant_arena_bytes},
};

constexpr std::array<AlgoInfo, kAlgos.size()> infos() {
  std::array<AlgoInfo, kAlgos.size()> out{};
  for (size_t i = 0; i < kAlgos.size(); ++i) out[i] = kAlgos[i].info;
  return out;
}
constexpr auto kInfos = infos();

const Entry& entry(Algo id) {
  for (const auto& e : kAlgos)
    if (e.info.id == id) return e;
  throw std::invalid_argument("unknown algorithm id " + std::to_string(static_cast<int>(id)));
}

}  // namespace

std::span<const AlgoInfo> algorithms() { return kInfos; }

std::optional<Algo> algo_by_name(std::string_view name) {
  for (const auto& a : kInfos)
    if (a.name == name) return a.id;
  return std::nullopt;
}

const AlgoInfo& algo_info(Algo id) {
  for (const auto& a : kInfos)
    if (a.id == id) return a;
  throw std::invalid_argument("unknown algorithm id " + std::to_string(static_cast<int>(id)));
}

std::unique_ptr<Machine> make_machine(Algo algo, const Plan& plan, Rank me) {
  if (me >= plan.nodes()) throw std::invalid_argument("make_machine: rank is outside the group");
  return entry(algo).make(plan, me);
}

MachinePtr make_machine(Algo algo, const Plan& plan, Rank me, MachineArena& arena) {
  if (me >= plan.nodes()) throw std::invalid_argument("make_machine: rank is outside the group");
  return entry(algo).make_in(plan, me, arena);
}

std::unique_ptr<Machine> make_machine(Algo algo, const Plan& plan, Rank me, const GroupShape& shape) {
  if (me >= plan.nodes()) throw std::invalid_argument("make_machine: rank is outside the group");
  if (algo == Algo::Hypercube && !shape.hypercube_order.empty()) return make_hypercube(plan, me, shape.hypercube_order);
  if (algo == Algo::Multilane && !shape.site_of_rank.empty()) return make_multilane(plan, me, shape.site_of_rank);
  return entry(algo).make(plan, me);
}

MachinePtr make_machine(Algo algo, const Plan& plan, Rank me, MachineArena& arena, const GroupShape& shape) {
  if (me >= plan.nodes()) throw std::invalid_argument("make_machine: rank is outside the group");
  if (algo == Algo::Hypercube && !shape.hypercube_order.empty())
    return make_hypercube(plan, me, shape.hypercube_order, arena);
  if (algo == Algo::Multilane && !shape.site_of_rank.empty())
    return make_multilane(plan, me, shape.site_of_rank, arena);
  return entry(algo).make_in(plan, me, arena);
}

size_t machine_arena_bytes(Algo algo, uint32_t nodes, uint16_t lanes, uint32_t max_segments) {
  (void)lanes;  // no registered machine's size depends on it (see registry.h)
  return entry(algo).bytes(nodes, max_segments);
}

size_t machine_arena_bytes(uint32_t nodes, uint16_t lanes, uint32_t max_segments) {
  size_t most = 0;
  for (const auto& e : kAlgos) most = std::max(most, machine_arena_bytes(e.info.id, nodes, lanes, max_segments));
  return most;
}

size_t machine_arena_bytes(uint32_t nodes, uint16_t lanes, uint32_t max_segments, const GroupShape& shape) {
  size_t most = machine_arena_bytes(nodes, lanes, max_segments);
  if (!shape.hypercube_order.empty()) most = std::max(most, hypercube_arena_bytes(nodes, max_segments, true));
  if (!shape.site_of_rank.empty()) most = std::max(most, multilane_arena_bytes(nodes, max_segments, true));
  return most;
}

}  // namespace lanecast::algos
