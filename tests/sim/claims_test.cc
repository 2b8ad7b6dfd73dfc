// The seed papers' claims, as the simulator sees them (issue 3, "Done when" 4).
// Each test skips until the algorithms it compares are registered.
#include <gtest/gtest.h>

#include <cstdio>

#include "algos/registry.h"
#include "algos/sim/simulator.h"

namespace lanecast::algos::sim {
namespace {

double predicted_us(const char* name, uint32_t p, uint64_t n, uint32_t s = 8192) {
  PlanParams pp;
  pp.nodes = p;
  pp.message_bytes = n;
  pp.segment_bytes = s;
  const Plan plan(pp);
  Network net;  // t0 10 us, 1250 MB/s
  const SimResult r = simulate(*algo_by_name(name), plan, net);
  EXPECT_TRUE(r.complete) << name << " p=" << p << ": " << r.problem;
  return double(r.completion) / 1e6;
}

bool registered(std::initializer_list<const char*> names, std::string* missing) {
  for (const char* n : names)
    if (!algo_by_name(n)) *missing += std::string(" ") + n;
  return missing->empty();
}

// Juhasz: constant in p, about twice as fast as binomial beyond 9 nodes.
TEST(Claims, SymmetricTwiceAsFastAsBinomial) {
  std::string missing;
  if (!registered({"symmetric", "binomial"}, &missing)) GTEST_SKIP() << "not registered:" << missing;
  for (uint32_t p : {10u, 16u, 33u, 64u}) {
    const double sym = predicted_us("symmetric", p, 8 << 20), bin = predicted_us("binomial", p, 8 << 20);
    std::printf("p=%u 8M: binomial %.0f us, symmetric %.0f us, ratio %.2f\n", p, bin, sym, bin / sym);
    EXPECT_GE(bin / sym, 1.8) << "p=" << p;
  }
}

// Happe & Vinter: the two-tree bintree at least three times binomial at 8 MiB, 64 nodes.
TEST(Claims, BintreeThreeTimesBinomial) {
  std::string missing;
  if (!registered({"bintree", "binomial"}, &missing)) GTEST_SKIP() << "not registered:" << missing;
  const double bt = predicted_us("bintree", 64, 8 << 20), bin = predicted_us("binomial", 64, 8 << 20);
  std::printf("p=64 8M: binomial %.0f us, bintree %.0f us, ratio %.2f\n", bin, bt, bin / bt);
  EXPECT_GE(bin / bt, 3.0);
}

}  // namespace
}  // namespace lanecast::algos::sim
