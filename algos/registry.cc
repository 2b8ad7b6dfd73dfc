#include "algos/registry.h"

#include <array>
#include <stdexcept>

namespace lanecast::algos {
namespace {
constexpr std::array<AlgoInfo, 0> kAlgos{};
}  // namespace

std::span<const AlgoInfo> algorithms() { return kAlgos; }

std::optional<Algo> algo_by_name(std::string_view name) {
  for (const auto& a : kAlgos)
    if (a.name == name) return a.id;
  return std::nullopt;
}

const AlgoInfo& algo_info(Algo id) {
  for (const auto& a : kAlgos)
    if (a.id == id) return a;
  throw std::invalid_argument("unknown algorithm id");
}

std::unique_ptr<Machine> make_machine(Algo, const Plan&, Rank) {
  throw std::invalid_argument("no algorithms registered yet");
}

}  // namespace lanecast::algos
