// Algorithms by name: what `lanecast bench --algo NAME` and the engine look up.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string_view>

#include "algos/machine.h"
#include "algos/plan.h"

namespace lanecast::algos {

// Stable numeric identifiers: they travel in the wire header.
enum class Algo : uint8_t {
  Linear = 1,
  Binomial = 2,
  Chain = 3,
  Binary = 4,
  Bintree = 5,
  Symmetric = 6,
  ScatterAllgather = 7,
  Hypercube = 8,
  Multilane = 9,
  McastChain = 10,  // 9 is multilane's
};

struct AlgoInfo {
  Algo id;
  std::string_view name;     // as typed on the command line
  std::string_view summary;  // one line for --help
};

std::span<const AlgoInfo> algorithms();
std::optional<Algo> algo_by_name(std::string_view name);
const AlgoInfo& algo_info(Algo id);

// The machine for rank `me` in the broadcast described by `plan`.
std::unique_ptr<Machine> make_machine(Algo algo, const Plan& plan, Rank me);

}  // namespace lanecast::algos
