// Every registered algorithm, run by the model executor with random legal event
// orders: p = 1..65, edge sizes around two segment sizes, several roots and
// seeds. A failure prints its replay line (LANECAST_SEED=...).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "algos/registry.h"
#include "tests/algos/sweep.h"

namespace lanecast::algos::testing {
namespace {

constexpr uint32_t kMaxNodes = 65;

class Sweep : public ::testing::TestWithParam<Algo> {};

// Segment 64: sizes 0, 1, s-1, s, s+1 and a few segments with a short tail;
// every p, every root of sweep_roots, every seed, random order.
TEST_P(Sweep, EdgeSizesEveryGroupSize) {
  constexpr uint32_t s = 64;
  for (uint64_t seed : sweep_seeds())
    for (uint32_t p = 1; p <= kMaxNodes; ++p)
      for (Rank root : sweep_roots(p, seed))
        for (uint64_t n : {0u, 1u, s - 1, s, s + 1, 5 * s + 3})
          if (!check_run(GetParam(), p, root, n, s, seed)) return;
}

// Emission order and its reverse (Fifo, Lifo), for every p.
TEST_P(Sweep, FifoAndLifoOrders) {
  constexpr uint32_t s = 64;
  const uint64_t seed = sweep_seeds().front();
  for (model::Order order : {model::Order::Fifo, model::Order::Lifo})
    for (uint32_t p = 1; p <= kMaxNodes; ++p)
      for (Rank root : {Rank{0}, p / 2})
        for (uint64_t n : {1u, s + 1, 7 * s})
          if (!check_run(GetParam(), p, root, n, s, seed, order)) return;
}

// Segment 4096: s-1, s, s+1 for every p; 1 MiB + 7 (257 segments) for every p
// up to 33 and a spread of larger p, with a seed-derived root.
TEST_P(Sweep, LargeMessages) {
  constexpr uint32_t s = 4096;
  constexpr uint64_t big = (uint64_t{1} << 20) + 7;
  const uint64_t seed = sweep_seeds().front();
  for (uint32_t p = 1; p <= kMaxNodes; ++p) {
    const std::vector<Rank> roots = sweep_roots(p, seed);
    for (uint64_t n : {s - 1, s, s + 1})
      if (!check_run(GetParam(), p, roots.back(), n, s, seed)) return;
    if (p <= 33 || p == 48 || p == 63 || p == 64 || p == 65)
      if (!check_run(GetParam(), p, roots.back(), big, s, seed)) return;
  }
}

// 1 MiB + 7 cut in 1024-byte segments (1025 of them) on a few small groups.
TEST_P(Sweep, ManySegments) {
  constexpr uint32_t s = 1024;
  constexpr uint64_t big = (uint64_t{1} << 20) + 7;
  for (uint64_t seed : sweep_seeds())
    for (uint32_t p : {2u, 3u, 5u, 8u})
      if (!check_run(GetParam(), p, p - 1, big, s, seed)) return;
}

std::vector<Algo> registered() {
  std::vector<Algo> out;
  for (const AlgoInfo& a : algorithms()) out.push_back(a.id);
  return out;
}

// Names the seeds once, so that a run's log says how to replay it.
class PrintSeeds : public ::testing::Environment {
 public:
  void SetUp() override {
    std::printf("algos sweeps: seeds");
    for (uint64_t s : sweep_seeds()) std::printf(" %llu", static_cast<unsigned long long>(s));
    std::printf(" (set LANECAST_SEED=N to run one)\n");
  }
};
const auto* const kPrintSeeds = ::testing::AddGlobalTestEnvironment(new PrintSeeds);

INSTANTIATE_TEST_SUITE_P(Registered, Sweep, ::testing::ValuesIn(registered()),
                         [](const ::testing::TestParamInfo<Algo>& i) {
                           return std::string(algo_info(i.param).name);
                         });

}  // namespace
}  // namespace lanecast::algos::testing
