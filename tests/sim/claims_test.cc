// The seed papers' claims, as the simulator sees them (issue 3, "Done when" 4).
// Each test first asserts that the algorithms it compares are registered: a
// renamed or removed one fails the claim, it does not skip it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "algos/hypercube.h"
#include "algos/registry.h"
#include "algos/sim/simulator.h"
#include "algos/topology/form_hypercube.h"
#include "tests/sim/registered.h"

namespace lanecast::algos::sim {
namespace {

double predicted_us(const char* name, uint32_t p, uint64_t n, uint32_t s = 8192) {
  const auto id = algo_by_name(name);
  if (!id) {
    ADD_FAILURE() << test::registered(name).message();
    return std::nan("");
  }
  PlanParams pp;
  pp.nodes = p;
  pp.message_bytes = n;
  pp.segment_bytes = s;
  const Plan plan(pp);
  Network net;  // t0 10 us, 1250 MB/s
  const SimResult r = simulate(*id, plan, net);
  EXPECT_TRUE(r.complete) << name << " p=" << p << ": " << r.problem;
  return double(r.completion) / 1e6;
}

// Juhasz: constant in p, about twice as fast as binomial beyond 9 nodes.
TEST(Claims, SymmetricTwiceAsFastAsBinomial) {
  ASSERT_TRUE(test::registered("symmetric"));
  ASSERT_TRUE(test::registered("binomial"));
  for (uint32_t p : {10u, 16u, 33u, 64u}) {
    const double sym = predicted_us("symmetric", p, 8 << 20), bin = predicted_us("binomial", p, 8 << 20);
    std::printf("p=%u 8M: binomial %.0f us, symmetric %.0f us, ratio %.2f\n", p, bin, sym, bin / sym);
    EXPECT_GE(bin / sym, 1.8) << "p=" << p;
  }
}

// Happe & Vinter: the two-tree bintree at least three times binomial at 8 MiB, 64 nodes.
TEST(Claims, BintreeThreeTimesBinomial) {
  ASSERT_TRUE(test::registered("bintree"));
  ASSERT_TRUE(test::registered("binomial"));
  const double bt = predicted_us("bintree", 64, 8 << 20), bin = predicted_us("binomial", 64, 8 << 20);
  std::printf("p=64 8M: binomial %.0f us, bintree %.0f us, ratio %.2f\n", bin, bt, bin / bt);
  EXPECT_GE(bin / bt, 3.0);
}

}  // namespace
}  // namespace lanecast::algos::sim

namespace lanecast::algos::sim {
namespace {

// Figueira: on island topologies (16 nodes, 1-4 islands, 1-4 x 1500 us between
// islands) the form-hypercube order beats identifier order by at least 20% on
// average over 50 random topologies. Seeds 1..50 (islands = 1 + seed % 4, 50 us
// inside an island, 1500..6000 us between, 64 KiB), printed per topology. A
// single island leaves nothing to reorder: the paper's double version is held
// to 20% over the multi-island topologies. lanecast's form-best
// (form_hypercube_best: the fastest predicted of the identity and the paper's
// variants, refined by swaps the cost model accepts; what `--order form`
// uses) is held to 20% over all 50 and to never being slower than identifier
// order. paper-best: the same choice without lanecast's swap refinement.
TEST(Claims, FormHypercubeBeatsIdentifierOrderOnIslands) {
  ASSERT_TRUE(test::registered("hypercube"));
  const auto id = algo_by_name("hypercube");
  PlanParams pp;
  pp.nodes = 16;
  pp.message_bytes = 64 << 10;
  pp.segment_bytes = 1400;
  const Plan plan(pp);
  // The port time of the whole message, as the simulator sees it: one hop, no latency.
  PlanParams two = pp;
  two.nodes = 2;
  Network flat;
  flat.latency = LatencyMap(0);
  const double hop = double(simulate(*id, Plan(two), flat).completion);
  using Former = std::function<std::vector<Rank>(std::span<const double>)>;
  auto passes = [](std::vector<topology::FormPass> ps) -> Former {
    return [ps](std::span<const double> lat) { return topology::form_hypercube(16, lat, ps); };
  };
  auto best = [hop](bool refine) -> Former {
    return [hop, refine](std::span<const double> lat) {
      topology::FormBestOptions o;
      o.refine = refine;
      return topology::form_hypercube_best(16, lat, hop, o).order;
    };
  };
  struct Variant {
    const char* name;
    Former form;
    double gain = 0, multi_gain = 0;
  };
  std::vector<Variant> variants = {{"form-double", passes(topology::form_double())},
                                   {"form1", passes(topology::form_single(1))},
                                   {"form2", passes(topology::form_single(2))},
                                   {"form3", passes(topology::form_single(3))},
                                   {"paper-best", best(false)},
                                   {"form-best", best(true)}};
  const int kTopologies = 50;
  int multi = 0;
  for (int seed = 1; seed <= kTopologies; ++seed) multi += seed % 4 != 0;
  for (int seed = 1; seed <= kTopologies; ++seed) {
    const uint32_t islands = 1 + static_cast<uint32_t>(seed % 4);
    Network net;
    net.latency = LatencyMap::random_islands(16, islands, 50 * kPicosPerMicro, 1500 * kPicosPerMicro,
                                           6000 * kPicosPerMicro, static_cast<uint64_t>(seed));
    std::vector<double> lat(256, 0);
    for (Rank a = 0; a < 16; ++a)
      for (Rank b = 0; b < 16; ++b) lat[a * 16 + b] = a == b ? 0 : double(net.latency.latency(a, b));
    const double base = double(simulate(*id, plan, net).completion);
    std::printf("seed %2d, %u islands: id %6.0f us", seed, islands, base / 1e6);
    for (auto& v : variants) {
      const std::vector<Rank> order = v.form(lat);
      const double t = double(
          simulate(plan, [&](Rank r) { return make_hypercube(plan, r, order); }, net).completion);
      v.gain += (1 - t / base) / kTopologies;
      if (islands > 1) v.multi_gain += (1 - t / base) / multi;
      std::printf("  %s %6.0f", v.name, t / 1e6);
      if (std::string_view(v.name) == "form-best") {
        EXPECT_LE(t, base) << "seed " << seed;
      }
    }
    std::printf("\n");
  }
  for (const auto& v : variants)
    std::printf("mean gain over identifier order, %-11s: %5.1f%% over all %d, %5.1f%% over the %d with 2-4 islands\n",
                v.name, v.gain * 100, kTopologies, v.multi_gain * 100, multi);
  EXPECT_GE(variants[0].multi_gain, 0.20) << "form-double";
  EXPECT_GE(variants.back().gain, 0.20) << "form-best";
}

}  // namespace
}  // namespace lanecast::algos::sim
