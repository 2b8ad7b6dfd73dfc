// The hypercube shape, form-hypercube ordering (Figueira), and the hypercube
// machine run with formed and random orders.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

#include "algos/hypercube.h"
#include "algos/model/model.h"
#include "algos/topology/form_hypercube.h"
#include "algos/topology/hypercube.h"
#include "tests/algos/recording.h"
#include "tests/algos/sweep.h"

namespace lanecast::algos::testing {
namespace {

using topology::FormPass;

std::vector<Rank> kids_of(Rank v, uint32_t p) {
  topology::HypercubeChildren k{};
  const uint32_t n = topology::hypercube_children(v, p, k);
  return std::vector<Rank>(k.begin(), k.begin() + n);
}

TEST(HypercubeShape, StepOrderChildren) {
  EXPECT_EQ(kids_of(0, 8), (std::vector<Rank>{1, 2, 4}));
  EXPECT_EQ(kids_of(1, 8), (std::vector<Rank>{3, 5}));
  EXPECT_EQ(kids_of(3, 8), (std::vector<Rank>{7}));
  EXPECT_EQ(kids_of(2, 6), (std::vector<Rank>{}));  // 6 absent
  EXPECT_EQ(topology::hypercube_parent(7), 3u);
  EXPECT_EQ(topology::hypercube_parent(4), 0u);
  EXPECT_EQ(topology::hypercube_parent(0), kNoRank);
}

TEST(HypercubeShape, SpansEveryGroupSize) {
  for (uint32_t p = 1; p <= 70; ++p) {
    std::vector<int> listed(p, 0);
    for (Rank v = 0; v < p; ++v)
      for (Rank c : kids_of(v, p)) {
        ASSERT_LT(c, p);
        ++listed[c];
        EXPECT_EQ(topology::hypercube_parent(c), v);
      }
    EXPECT_EQ(listed[0], 0);
    for (Rank v = 1; v < p; ++v) EXPECT_EQ(listed[v], 1) << "p=" << p << " v=" << v;
  }
}

// Islands as in issue 3: 1-4 islands, inter-island latency 1-4 x 1500 us,
// inside an island 10-100 us; ranks assigned to islands at random.
std::vector<double> islands(uint32_t n, std::mt19937_64& rng) {
  const uint32_t k = std::uniform_int_distribution<uint32_t>(1, 4)(rng);
  std::vector<uint32_t> island(n);
  for (auto& i : island) i = std::uniform_int_distribution<uint32_t>(0, k - 1)(rng);
  std::vector<double> between(k * k);
  for (uint32_t a = 0; a < k; ++a)
    for (uint32_t b = a; b < k; ++b)
      between[a * k + b] = between[b * k + a] =
          1500.0 * std::uniform_int_distribution<int>(1, 4)(rng);
  std::vector<double> lat(size_t{n} * n, 0);
  for (uint32_t a = 0; a < n; ++a)
    for (uint32_t b = a + 1; b < n; ++b) {
      const double l = island[a] == island[b] ? std::uniform_real_distribution<double>(10, 100)(rng)
                                              : between[island[a] * k + island[b]];
      lat[size_t{a} * n + b] = lat[size_t{b} * n + a] = l;
    }
  return lat;
}

bool is_permutation_of_ranks(const std::vector<Rank>& o) {
  std::vector<Rank> s = o;
  std::sort(s.begin(), s.end());
  for (Rank i = 0; i < s.size(); ++i)
    if (s[i] != i) return false;
  return true;
}

// Issue 3: form-hypercube never increases the maximum subcube latency, for
// single passes at dimension 1, 2, 3 and the double version (per pass).
TEST(FormHypercube, NeverIncreasesTheMaximumSubcubeLatency) {
  for (uint64_t seed : sweep_seeds()) {
    std::mt19937_64 rng(seed);
    for (int trial = 0; trial < 50; ++trial)
      for (uint32_t n : {16u, 13u, 32u}) {
        SCOPED_TRACE(::testing::Message() << "seed=" << seed << " trial=" << trial << " n=" << n
                                          << " (LANECAST_SEED=" << seed << ")");
        const std::vector<double> lat = islands(n, rng);
        std::vector<Rank> id(n);
        std::iota(id.begin(), id.end(), Rank{0});
        for (uint32_t k : {1u, 2u, 3u}) {
          const auto passes = topology::form_single(k);
          const auto o = topology::form_hypercube(n, lat, passes);
          ASSERT_TRUE(is_permutation_of_ranks(o));
          EXPECT_LE(topology::max_subcube_latency(o, lat, k), topology::max_subcube_latency(id, lat, k));
        }
        const FormPass first[] = {{1, 0}}, second[] = {{2, 1}};
        const auto o1 = topology::form_hypercube(n, lat, first);
        const auto o2 = topology::form_hypercube(n, lat, second, o1);
        EXPECT_LE(topology::max_subcube_latency(o1, lat, 1), topology::max_subcube_latency(id, lat, 1));
        EXPECT_LE(topology::max_subcube_latency(o2, lat, 2), topology::max_subcube_latency(o1, lat, 2));
        EXPECT_EQ(topology::form_hypercube(n, lat, topology::form_double()), o2);
        ASSERT_TRUE(is_permutation_of_ranks(o2));
      }
  }
}

// Two islands interleaved (even ranks / odd ranks): the double version puts
// each island in its own subcubes of four; pairs alone already by dimension 1.
TEST(FormHypercube, RegroupsInterleavedIslands) {
  constexpr uint32_t n = 16;
  std::vector<double> lat(n * n, 0);
  for (uint32_t a = 0; a < n; ++a)
    for (uint32_t b = 0; b < n; ++b)
      if (a != b) lat[a * n + b] = a % 2 == b % 2 ? 50 : 3000;
  std::vector<Rank> id(n);
  std::iota(id.begin(), id.end(), Rank{0});
  EXPECT_EQ(topology::max_subcube_latency(id, lat, 1), 3000);
  const auto o1 = topology::form_hypercube(n, lat, topology::form_single(1));
  EXPECT_EQ(topology::max_subcube_latency(o1, lat, 1), 50);
  const auto o2 = topology::form_hypercube(n, lat, topology::form_double());
  EXPECT_EQ(topology::max_subcube_latency(o2, lat, 2), 50);
  EXPECT_EQ(topology::max_subcube_latency(o2, lat, 1), 50);
}

TEST(FormHypercube, BadInputThrows) {
  const std::vector<double> lat(16, 1.0);
  EXPECT_THROW(topology::form_hypercube(5, lat, topology::form_single(1)), std::invalid_argument);
  EXPECT_THROW(topology::form_hypercube(4, lat, topology::form_single(1), {0, 1, 1, 2}),
               std::invalid_argument);
  const FormPass bad[] = {{1, 1}};
  EXPECT_THROW(topology::form_hypercube(4, lat, bad), std::invalid_argument);
}

// Root 5 of 8 at position 5 (identity order): ids by XOR, children of id 0 are
// ids 1, 2, 4 = ranks 4, 7, 1; the whole message to each, in step order.
TEST(HypercubeMachine, RootSendsWholeMessagePerStep) {
  PlanParams pp;
  pp.nodes = 8;
  pp.root = 5;
  pp.message_bytes = 16;
  pp.segment_bytes = 8;
  const Plan plan(pp);
  auto m = make_machine(Algo::Hypercube, plan, 5);
  Recorder out;
  m->start(out);
  EXPECT_EQ(out.take(), (std::vector<Act>{send(4, 0), send(4, 1), send(7, 0), send(7, 1),
                                          send(1, 0), send(1, 1)}));
  auto leaf = make_machine(Algo::Hypercube, plan, 4);  // id 1: children ids 3, 5 = ranks 6, 0
  leaf->start(out);
  leaf->on_segment(1, 5, 0, out);  // future
  EXPECT_EQ(out.take(), std::vector<Act>{deliver(1)});
  leaf->on_segment(0, 5, 0, out);
  EXPECT_EQ(out.take(), (std::vector<Act>{deliver(0), send(6, 0), send(6, 1), send(0, 0),
                                          send(0, 1)}));
  EXPECT_THROW(make_hypercube(plan, 0, std::vector<Rank>{0, 1, 2}), std::invalid_argument);
  EXPECT_THROW(make_hypercube(plan, 0, std::vector<Rank>{0, 1, 2, 3, 4, 5, 6, 6}),
               std::invalid_argument);
}

// The machine with formed and random orders, p = 1..65, several roots: the
// model executor's checks (exactly once, equal bytes, termination).
TEST(HypercubeMachine, AnyOrderAnyRoot) {
  for (uint64_t seed : sweep_seeds()) {
    std::mt19937_64 rng(seed);
    for (uint32_t p = 1; p <= 65; ++p) {
      std::vector<Rank> order(p);
      std::iota(order.begin(), order.end(), Rank{0});
      std::shuffle(order.begin(), order.end(), rng);
      if (p % 2 == 0) order = topology::form_hypercube(p, islands(p, rng), topology::form_double(), order);
      for (Rank root : sweep_roots(p, seed))
        for (uint64_t n : {uint64_t{0}, uint64_t{1}, uint64_t{200}}) {
          PlanParams pp;
          pp.nodes = p;
          pp.root = root;
          pp.message_bytes = n;
          pp.segment_bytes = 64;
          const Plan plan(pp);
          const model::Result r = model::run(plan, [&](Rank me) { return make_hypercube(plan, me, order); },
                                             model::Options{.seed = seed});
          ASSERT_TRUE(r.ok) << "p=" << p << " root=" << root << " n=" << n << " seed=" << seed
                            << " (LANECAST_SEED=" << seed << "): " << r.error;
        }
    }
  }
}

}  // namespace
}  // namespace lanecast::algos::testing
