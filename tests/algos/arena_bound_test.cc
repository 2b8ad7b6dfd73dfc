// machine_arena_bytes() against what the machines take: every registered
// algorithm, p = 1..70 and 127, 128, 129, 1000, 1024, 4096, the sweep's roots
// (0, p-1, p/2 and one per seed), every rank up to 70 and a sample above,
// messages of 0, 1, about half of and all of max_segments segments, one and
// two lanes. Every machine is built in an arena of exactly the bound: none may
// throw or touch the heap; the bound is reached in every configuration (an
// arena one byte smaller refuses that case); each algorithm's own bound is
// reached too. The slack is printed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "algos/bitmap.h"
#include "algos/mix.h"
#include "algos/registry.h"
#include "tests/algos/arena_helpers.h"
#include "tests/algos/heap_counter.h"
#include "tests/algos/sweep.h"

namespace lanecast::algos::testing {
namespace {

using lanecast::testing::HeapWatch;

constexpr uint32_t kSeg = 64;

std::vector<uint32_t> group_sizes() {
  std::vector<uint32_t> out;
  for (uint32_t p = 1; p <= 70; ++p) out.push_back(p);
  for (uint32_t p : {127u, 128u, 129u, 1000u, 1024u, 4096u}) out.push_back(p);
  return out;
}

void add_unique(std::vector<Rank>& v, Rank r) {
  if (std::find(v.begin(), v.end(), r) == v.end()) v.push_back(r);
}

// Every seed's roots.
std::vector<Rank> roots_of(uint32_t p) {
  std::vector<Rank> out;
  for (uint64_t seed : sweep_seeds())
    for (Rank r : sweep_roots(p, seed)) add_unique(out, r);
  return out;
}

// Every rank up to 70; above, the ends, the middle, the root's neighbours and
// a few drawn from each seed.
std::vector<Rank> ranks_of(uint32_t p, Rank root) {
  std::vector<Rank> out;
  if (p <= 70) {
    for (Rank r = 0; r < p; ++r) out.push_back(r);
    return out;
  }
  for (Rank r : {Rank{0}, Rank{1}, p / 2, p - 1, root, (root + 1) % p, (root + p - 1) % p}) add_unique(out, r);
  for (uint64_t seed : sweep_seeds()) {
    uint64_t x = seed;
    for (int i = 0; i < 4; ++i) add_unique(out, static_cast<Rank>(splitmix64(x) % p));
  }
  return out;
}

// Message sizes in bytes for at most m segments of kSeg bytes.
std::vector<uint64_t> sizes_of(uint32_t m) {
  std::vector<uint64_t> out{0, 1};
  for (uint64_t n : {uint64_t{m / 2} * kSeg + 1, uint64_t{m} * kSeg - 1, uint64_t{m} * kSeg})
    if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  return out;
}

struct Case {
  Algo algo{};
  uint32_t p = 0;
  uint16_t lanes = 0;
  uint32_t max_segments = 0;
  Rank root = 0, rank = 0;
  uint64_t bytes = 0;
};

std::string describe(const Case& c) {
  return std::string(algo_info(c.algo).name) + " p=" + std::to_string(c.p) + " lanes=" +
         std::to_string(c.lanes) + " max_segments=" + std::to_string(c.max_segments) + " root=" +
         std::to_string(c.root) + " rank=" + std::to_string(c.rank) + " n=" + std::to_string(c.bytes);
}

TEST(ArenaBound, NeverExceededAndReachedInEveryConfiguration) {
  uint64_t cases = 0, configs = 0;
  size_t worst_slack = 0;
  Case worst;
  size_t worst_bound = 0, worst_used = 0;
  size_t own_slack = 0;  // bound minus an algorithm's own bound, largest
  Case own;
  for (uint32_t p : group_sizes())
    for (uint16_t lanes : {uint16_t{1}, uint16_t{2}})
      for (uint32_t m : {1u, 64u, 65u, 1000u}) {
        ++configs;
        const size_t bound = machine_arena_bytes(p, lanes, m);
        MachineArena arena(bound);
        size_t most = 0;  // the most any case of this configuration took
        Case at_most;
        for (const AlgoInfo& a : algorithms()) {
          const size_t own_bound = machine_arena_bytes(a.id, p, lanes, m);
          ASSERT_LE(own_bound, bound);
          size_t own_most = 0;
          for (Rank root : roots_of(p))
            for (uint64_t n : sizes_of(m)) {
              const Plan plan = plan_of(p, root, n, kSeg, lanes);
              for (Rank me : ranks_of(p, root)) {
                const Case c{a.id, p, lanes, m, root, me, n};
                ++cases;
                size_t used = 0;
                const HeapWatch heap;
                try {
                  MachinePtr machine = make_machine(a.id, plan, me, arena);
                  used = arena.used();
                } catch (const std::exception& e) {
                  FAIL() << describe(c) << ": " << e.what() << " (arena " << bound << " bytes)";
                }
                ASSERT_EQ(heap.allocations(), 0u) << describe(c);
                ASSERT_EQ(heap.frees(), 0u) << describe(c);
                ASSERT_LE(used, own_bound) << describe(c);
                own_most = std::max(own_most, used);
                if (used > most) {
                  most = used;
                  at_most = c;
                }
                if (bound - used > worst_slack) {
                  worst_slack = bound - used;
                  worst = c;
                  worst_bound = bound;
                  worst_used = used;
                }
              }
            }
          EXPECT_EQ(own_most, own_bound) << a.name << " never reaches its own bound: p=" << p
                                         << " lanes=" << lanes << " max_segments=" << m;
          if (bound - own_bound > own_slack) {
            own_slack = bound - own_bound;
            own = {a.id, p, lanes, m, 0, 0, 0};
          }
        }
        // Tight: the case that took the whole bound fails in one byte less.
        ASSERT_EQ(most, bound) << "p=" << p << " lanes=" << lanes << " max_segments=" << m;
        MachineArena short_arena(bound - 1);
        const Plan plan = plan_of(p, at_most.root, at_most.bytes, kSeg, lanes);
        EXPECT_THROW(make_machine(at_most.algo, plan, at_most.rank, short_arena), ArenaExhausted)
            << describe(at_most);
      }
  std::printf("arena bound: %llu machines in %llu configurations, none above the bound, the bound reached in "
              "each (one byte less throws)\n",
              static_cast<unsigned long long>(cases), static_cast<unsigned long long>(configs));
  std::printf("arena bound: worst-case slack %zu bytes (bound %zu, used %zu): %s\n", worst_slack, worst_bound,
              worst_used, describe(worst).c_str());
  std::printf("arena bound: largest gap between the bound and one algorithm's own bound: %zu bytes (%s, p=%u, "
              "max_segments=%u)\n",
              own_slack, std::string(algo_info(own.algo).name).c_str(), own.p, own.max_segments);
}

// The per-algorithm bounds at one configuration, for the record.
TEST(ArenaBound, PrintPerAlgorithm) {
  constexpr uint32_t p = 1024, m = 1000;
  std::printf("arena bytes at p=%u, max_segments=%u (have-bitmap %zu): every algorithm %zu\n", p, m,
              arena_block(Bitmap::bytes_for(m)), machine_arena_bytes(p, 2, m));
  for (const AlgoInfo& a : algorithms())
    std::printf("  %-18s %zu\n", std::string(a.name).c_str(), machine_arena_bytes(a.id, p, 2, m));
}

// Names the seeds once (this binary's sweeps draw roots and ranks from them),
// so that a run's log says how to replay it.
class PrintSeeds : public ::testing::Environment {
 public:
  void SetUp() override {
    std::printf("arena sweeps: seeds");
    for (uint64_t s : sweep_seeds()) std::printf(" %llu", static_cast<unsigned long long>(s));
    std::printf(" (set LANECAST_SEED=N to run one)\n");
  }
};
const auto* const kPrintSeeds = ::testing::AddGlobalTestEnvironment(new PrintSeeds);

}  // namespace
}  // namespace lanecast::algos::testing
