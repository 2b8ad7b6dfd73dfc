// The make_* overloads with options, in an arena of their own bound: a
// hypercube node order (its check's bitmap), multilane sites (the layout's
// tables), each scatter_allgather allgather, symmetric's one-phase option.
// None exceeds its bound, and each reaches it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "algos/hypercube.h"
#include "algos/multilane.h"
#include "algos/scatter_allgather.h"
#include "algos/symmetric.h"
#include "tests/algos/arena_helpers.h"
#include "tests/algos/heap_counter.h"
#include "tests/algos/sweep.h"

namespace lanecast::algos::testing {
namespace {

using lanecast::testing::HeapWatch;

constexpr uint32_t kSeg = 64;
constexpr uint32_t kMaxSegments = 65;

using Build = std::function<MachinePtr(const Plan&, Rank me, MachineArena&)>;

// Builds every rank's machine (a sample above 64 ranks) for three roots and a
// message of 0, 1 and kMaxSegments segments in an arena of `bound` bytes;
// returns the most any took. Failures name the case.
size_t most_used(uint32_t p, size_t bound, const Build& build, const std::string& what) {
  MachineArena arena(bound);
  size_t most = 0;
  for (Rank root : {Rank{0}, p - 1, p / 2})
    for (uint64_t n : {uint64_t{0}, uint64_t{1}, uint64_t{kMaxSegments} * kSeg}) {
      const Plan plan = plan_of(p, root, n, kSeg, 2);
      const Rank step = p <= 64 ? 1 : p / 61;  // the root is among every sample
      for (Rank r = root % step; r < p; r += step) {
        const HeapWatch heap;
        try {
          MachinePtr m = build(plan, r, arena);
          most = std::max(most, arena.used());
        } catch (const std::exception& e) {
          ADD_FAILURE() << what << " p=" << p << " root=" << root << " rank=" << r << " n=" << n << ": "
                        << e.what();
          return most;
        }
        EXPECT_EQ(heap.allocations(), 0u) << what << " p=" << p << " rank=" << r;
      }
    }
  return most;
}

std::vector<Rank> shuffled(uint32_t p, uint64_t seed) {
  std::vector<Rank> order(p);
  std::iota(order.begin(), order.end(), Rank{0});
  std::mt19937_64 rng(seed);
  std::shuffle(order.begin(), order.end(), rng);
  return order;
}

TEST(ArenaOptions, HypercubeWithAnOrder) {
  for (uint64_t seed : sweep_seeds())
    for (uint32_t p : {1u, 2u, 5u, 8u, 33u, 64u, 129u, 1024u}) {
      const std::vector<Rank> order = shuffled(p, seed);
      const size_t bound = hypercube_arena_bytes(p, kMaxSegments, true);
      EXPECT_EQ(most_used(p, bound,
                          [&](const Plan& plan, Rank me, MachineArena& a) { return make_hypercube(plan, me, order, a); },
                          "hypercube seed " + std::to_string(seed)),
                bound)
          << "p=" << p << " seed=" << seed;
    }
  // A bad order is refused and leaves the arena free.
  const Plan plan = plan_of(4, 0, 640, kSeg);
  MachineArena arena(hypercube_arena_bytes(4, 10, true));
  EXPECT_THROW(make_hypercube(plan, 0, std::vector<Rank>{0, 1, 1, 3}, arena), std::invalid_argument);
  EXPECT_FALSE(arena.busy());
}

TEST(ArenaOptions, MultilaneWithSites) {
  for (uint32_t p : {1u, 2u, 5u, 9u, 64u, 129u, 1000u})
    for (uint32_t sites : {1u, 2u, 3u, p}) {
      if (sites > p) continue;
      const std::vector<uint32_t> site_of_rank = topology::MultilaneLayout::contiguous(p, sites);
      const size_t bound = multilane_arena_bytes(p, kMaxSegments, true);
      const size_t most = most_used(
          p, bound,
          [&](const Plan& plan, Rank me, MachineArena& a) { return make_multilane(plan, me, site_of_rank, a); },
          "multilane sites " + std::to_string(sites));
      EXPECT_LE(most, bound);
      if (sites == p) {  // one site per rank: every table full
        EXPECT_EQ(most, bound) << "p=" << p;
      }
    }
  // A layout built outside the arena (once per group) takes nothing from it:
  // the one-site bound holds.
  for (uint32_t p : {1u, 6u, 100u})
    for (Rank root : {Rank{0}, p / 2}) {
      const topology::MultilaneLayout layout(p, root, topology::MultilaneLayout::contiguous(p, (p + 1) / 2));
      const Plan plan = plan_of(p, root, uint64_t{kMaxSegments} * kSeg, kSeg, 2);
      MachineArena arena(multilane_arena_bytes(p, kMaxSegments));
      for (Rank me = 0; me < p; ++me) {
        const HeapWatch heap;
        MachinePtr m = make_multilane(plan, me, layout, arena);
        EXPECT_EQ(heap.allocations(), 0u);
      }
    }
}

TEST(ArenaOptions, ScatterAllgatherEveryAllgather) {
  for (uint32_t p : {1u, 2u, 3u, 8u, 64u, 100u, 128u, 1024u})
    for (Allgather mode : {Allgather::Auto, Allgather::Ring, Allgather::RecursiveDoubling}) {
      if (mode == Allgather::RecursiveDoubling && (p & (p - 1)) != 0) continue;
      const size_t bound = scatter_allgather_arena_bytes(p, kMaxSegments, mode);
      EXPECT_EQ(most_used(p, bound,
                          [&](const Plan& plan, Rank me, MachineArena& a) {
                            return make_scatter_allgather(plan, me, mode, a);
                          },
                          "scatter_allgather"),
                bound)
          << "p=" << p << " mode=" << static_cast<int>(mode);
    }
}

TEST(ArenaOptions, SymmetricOnePhase) {
  for (uint32_t p : {1u, 2u, 7u, 129u}) {
    const size_t bound = symmetric_arena_bytes(p, kMaxSegments);
    EXPECT_EQ(most_used(p, bound,
                        [&](const Plan& plan, Rank me, MachineArena& a) {
                          return make_symmetric(plan, me, SymmetricOptions{.one_phase_below_bytes = 1u << 30}, a);
                        },
                        "symmetric one phase"),
              bound)
        << "p=" << p;
  }
}

}  // namespace
}  // namespace lanecast::algos::testing
