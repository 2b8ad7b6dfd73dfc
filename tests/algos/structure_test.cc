// Structural properties of the algorithms (issue 3), measured by the model
// executor's per-node counters: bytes sent and received, distinct peers.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <stdexcept>

#include "algos/registry.h"
#include "algos/scatter_allgather.h"
#include "algos/symmetric.h"
#include "tests/algos/sweep.h"

namespace lanecast::algos::testing {
namespace {

constexpr uint32_t kMaxNodes = 65;

// Runs `algo` and hands the statistics to `check`; false when the run failed.
template <typename Check>
bool measure(Algo algo, uint32_t p, Rank root, uint64_t n, uint32_t s, Check check) {
  model::Result r;
  if (!check_run(algo, p, root, n, s, sweep_seeds().front(), model::Order::Random, &r))
    return false;
  SCOPED_TRACE(::testing::Message() << algo_info(algo).name << " p=" << p << " root=" << root
                                    << " n=" << n << " s=" << s);
  check(r);
  return !::testing::Test::HasFailure();
}

// Every node of the chain but the tail sends the message once, to one peer.
TEST(Structure, ChainSendsTheMessageOnce) {
  for (uint32_t p = 2; p <= kMaxNodes; ++p)
    if (!measure(Algo::Chain, p, p / 3, 1000, 64, [&](const model::Result& r) {
          for (Rank x = 0; x < p; ++x) {
            EXPECT_LE(r.nodes[x].peers, 2u);
            EXPECT_EQ(r.nodes[x].bytes_sent, r.nodes[x].peers_sent_to ? 1000u : 0u);
          }
        }))
      return;
}

// Happe & Vinter: every node sends at most the message size and talks to at
// most four peers. Exact when the message is a whole number of segment pairs
// (both trees carry M/2); otherwise the even tree may carry one segment more
// than half, and its interior nodes send that twice: at most M + s.
TEST(Structure, BintreeSendsAtMostTheMessageToAtMostFourPeers) {
  constexpr uint32_t s = 64;
  for (uint32_t p = 1; p <= kMaxNodes; ++p)
    for (uint64_t n : {uint64_t{2 * s}, uint64_t{40 * s}, uint64_t{1}, uint64_t{s + 1},
                       uint64_t{41 * s - 5}})
      for (Rank root : {Rank{0}, p - 1})
        if (!measure(Algo::Bintree, p, root, n, s, [&](const model::Result& r) {
              const uint64_t bound = n % (2 * s) == 0 ? n : n + s;
              for (Rank x = 0; x < p; ++x) {
                EXPECT_LE(r.nodes[x].bytes_sent, bound) << "rank " << x;
                EXPECT_LE(r.nodes[x].peers, 4u) << "rank " << x;
                EXPECT_EQ(r.nodes[x].duplicates_received, 0u) << "rank " << x;
              }
            }))
          return;
}

// Juhasz: the root sends M bytes in total (two phases, from two segments on);
// every receiver gets each segment exactly once.
TEST(Structure, SymmetricRootSendsTheMessageOnce) {
  constexpr uint32_t s = 64;
  for (uint32_t p = 2; p <= kMaxNodes; ++p)
    for (uint64_t n : {uint64_t{s + 1}, uint64_t{3 * s}, uint64_t{100 * s - 7}})
      for (Rank root : {Rank{0}, p / 2})
        if (!measure(Algo::Symmetric, p, root, n, s, [&](const model::Result& r) {
              EXPECT_EQ(r.nodes[root].bytes_sent, n);
              for (Rank x = 0; x < p; ++x) {
                EXPECT_EQ(r.nodes[x].duplicates_received, 0u) << "rank " << x;
                EXPECT_EQ(r.nodes[x].bytes_received, x == root ? 0 : n) << "rank " << x;
              }
            }))
          return;
}

// Below the threshold (and for one segment) the root sends to everyone itself.
TEST(Structure, SymmetricOnePhaseForSmallMessages) {
  PlanParams pp;
  pp.nodes = 9;
  pp.root = 4;
  pp.message_bytes = 64;
  pp.segment_bytes = 64;
  Plan plan(pp);
  model::Result r = model::run(Algo::Symmetric, plan);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.nodes[4].bytes_sent, 8u * 64);
  pp.message_bytes = 1000;
  plan = Plan(pp);
  r = model::run(plan, [&](Rank me) { return make_symmetric(plan, me, {.one_phase_below_bytes = 1001}); });
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.nodes[4].bytes_sent, 8u * 1000);
  r = model::run(plan, [&](Rank me) { return make_symmetric(plan, me, {.one_phase_below_bytes = 1000}); });
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.nodes[4].bytes_sent, 1000u);
}

// van de Geijn with either allgather, forced, on every group size it allows:
// exactly-once delivery and equal bytes (the model executor's checks), plus
// recursive doubling receives every segment exactly once, and every node sends
// at most twice p chunks (its scatter subtree, then p - 1 chunks of allgather).
TEST(Structure, ScatterAllgatherBothAllgathers) {
  for (uint64_t seed : sweep_seeds())
    for (uint32_t p = 1; p <= kMaxNodes; ++p)
      for (Allgather ag : {Allgather::Ring, Allgather::RecursiveDoubling}) {
        if (ag == Allgather::RecursiveDoubling && !std::has_single_bit(p)) continue;
        for (Rank root : sweep_roots(p, seed))
          for (uint64_t n : {uint64_t{0}, uint64_t{1}, uint64_t{65}, uint64_t{3 * p * 64 + 5}}) {
            PlanParams pp;
            pp.nodes = p;
            pp.root = root;
            pp.message_bytes = n;
            pp.segment_bytes = 64;
            const Plan plan(pp);
            // p chunks of at most ceil(m / p) segments: twice the message when
            // the chunks are equal.
            const uint64_t chunk_bound = uint64_t{p} * ((plan.segments() + p - 1) / p) * 64;
            const model::Result r = model::run(
                plan, [&](Rank me) { return make_scatter_allgather(plan, me, ag); },
                model::Options{.seed = seed});
            SCOPED_TRACE(::testing::Message() << "p=" << p << " root=" << root << " n=" << n
                                              << (ag == Allgather::Ring ? " ring" : " doubling")
                                              << " seed=" << seed << " (LANECAST_SEED=" << seed << ")");
            ASSERT_TRUE(r.ok) << r.error;
            for (Rank x = 0; x < p; ++x) {
              if (ag == Allgather::RecursiveDoubling) {
                EXPECT_EQ(r.nodes[x].duplicates_received, 0u) << "rank " << x;
                EXPECT_EQ(r.nodes[x].bytes_received, x == root ? 0 : n) << "rank " << x;
              }
              EXPECT_LE(r.nodes[x].bytes_sent, 2 * chunk_bound) << "rank " << x;
            }
          }
      }
}

TEST(Structure, RecursiveDoublingNeedsAPowerOfTwo) {
  PlanParams pp;
  pp.nodes = 6;
  const Plan plan(pp);
  EXPECT_THROW(make_scatter_allgather(plan, 0, Allgather::RecursiveDoubling), std::invalid_argument);
}

}  // namespace
}  // namespace lanecast::algos::testing
