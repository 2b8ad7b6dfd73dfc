#include "algos/registry.h"

#include <array>
#include <stdexcept>
#include <string>

#include "algos/binary.h"
#include "algos/binomial.h"
#include "algos/bintree.h"
#include "algos/chain.h"
#include "algos/hypercube.h"
#include "algos/linear.h"
#include "algos/multilane.h"
#include "algos/mcast_chain.h"
#include "algos/scatter_allgather.h"
#include "algos/symmetric.h"

namespace lanecast::algos {
namespace {

using Factory = std::unique_ptr<Machine> (*)(const Plan&, Rank);

struct Entry {
  AlgoInfo info;
  Factory make;
};

constexpr std::array kAlgos{
    Entry{{Algo::Linear, "linear", "root sends every segment to every rank (MPI linear baseline)"},
          &make_linear},
    Entry{{Algo::Binomial, "binomial",
           "MPI binomial tree, store-and-forward of the whole message"},
          &make_binomial},
    Entry{{Algo::Chain, "chain", "pipelined chain (Happe & Vinter's segmented seqtree)"},
          &make_chain},
    Entry{{Algo::Binary, "binary", "pipelined binary tree"}, &make_binary},
    Entry{{Algo::Bintree, "bintree",
           "two binary trees, alternating segments (Happe & Vinter's segmented bintree)"},
          &make_bintree},
    Entry{{Algo::Symmetric, "symmetric",
           "one piece per receiver, then every receiver to all (Juhasz, constant in p)"},
          static_cast<Factory>(&make_symmetric)},
    Entry{{Algo::ScatterAllgather, "scatter_allgather",
           "binomial scatter, then ring or recursive-doubling allgather (van de Geijn)"},
          static_cast<Factory>(&make_scatter_allgather)},
    Entry{{Algo::Hypercube, "hypercube",
           "dimension-ordered hypercube, store-and-forward (Figueira; rank order here)"},
          static_cast<Factory>(&make_hypercube)},
    Entry{{Algo::Multilane, "multilane",
           "two trees on two lanes, halves swapped at the leaves, chained across sites (one site here)"},
          static_cast<Factory>(&make_multilane)},
    Entry{{Algo::McastChain, "mcast_chain",
           "root multicasts every segment, a reliable ring repairs losses (Hoefler, Siebert & Rehm)"},
          &make_mcast_chain},
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

}  // namespace lanecast::algos
