// mcast_chain on the simulator: the multicast port model (one tx frame, one
// copy per receiver, per-receiver loss), `lanecast plan --mcast-loss`, and the
// issue's claim (Done when 4): small-message time nearly flat in p.
//
// What the model shows: a node that missed the multicast waits for its ring
// predecessor, so one small message takes (L + 1)(t0 + s td) + s td, L the
// longest run of consecutive losers along the ring (exact, checked below). With
// loss q the longest run among p receivers is about log_{1/q}(p): flat in
// practice for small q (the paper's "practically constant"), but at q = 50% it
// is log2 p, and the time grows like binomial's ceil(log2 p)(t0 + n td).
#include <gtest/gtest.h>

#include "tests/sim/plan_runner.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "algos/registry.h"
#include "algos/sim/simulator.h"
#include "apps/plan/plan_command.h"

namespace lanecast::algos::sim {
namespace {

constexpr double kT0 = 10e-6, kRate = 1.25e9;

SimResult run(Algo algo, uint32_t p, uint64_t n, uint32_t s, double loss, uint64_t seed, Rank root = 0) {
  PlanParams pp;
  pp.nodes = p;
  pp.root = root;
  pp.message_bytes = n;
  pp.segment_bytes = s;
  const Plan plan(pp);
  Network net;  // t0 10 us, 1250 MB/s
  net.multicast_loss = loss;
  net.multicast_seed = seed;
  SimResult r = simulate(algo, plan, net);
  EXPECT_TRUE(r.complete) << "p=" << p << " loss=" << loss << " seed=" << seed << ": " << r.problem;
  return r;
}

// One frame on the root's port, one copy into every receiver's; losses are
// counted per receiver and repaired by the ring.
TEST(McastChainSim, MulticastPortModel) {
  const double d = 1024 / kRate, T = kT0 + d;
  SimResult r = run(Algo::McastChain, 5, 1024, 1024, 0, 1, 2);
  EXPECT_EQ(r.frames_sent[2], 2u);  // its multicast and its ring send
  EXPECT_EQ(r.bytes_sent[2], 2048u);
  EXPECT_EQ(r.bytes_received[3], 2048u);  // multicast + the root's ring send
  EXPECT_EQ(r.bytes_received[1], 2048u);  // the last: multicast + its predecessor's
  EXPECT_EQ(r.bytes_received[2], 0u);     // no edge into the root, no copy to the sender
  EXPECT_EQ(r.peers[2], 1u);              // point-to-point peers only
  EXPECT_NEAR(double(r.completion) * 1e-12, T + d, 1e-9);  // t0 + 2 s td, any p

  r = run(Algo::McastChain, 5, 1024, 1024, 1.0, 1);  // every copy lost: the chain
  for (Rank v = 1; v < 5; ++v) EXPECT_EQ(r.multicast_lost[v], 1u);
  EXPECT_EQ(r.multicast_lost[0], 0u);
  EXPECT_NEAR(double(r.completion) * 1e-12, 4 * T + d, 1e-9);  // root sends 2 frames first
}

// The completion time of one small message from the losses: exact.
double run_length_form(const SimResult& r, uint32_t p, double d) {
  const double T = kT0 + d;
  double worst = 2 * d, h = 0;  // the root's port: its multicast and its ring send
  for (Rank v = 1; v < p; ++v) {
    const bool lost = r.multicast_lost[v] > 0;
    h = !lost ? T : v == 1 ? d + T : h + T;
    worst = std::max(worst, h + (v + 1 < p ? d : 0));
  }
  return worst;
}

// Done when 4. Criterion, 1 KiB (one frame), p = 8 .. 1024, 20 loss seeds:
//  - every run equals the run-length form above (so the time is the longest
//    run of losers, nothing else);
//  - loss 0: the same time for every p (t0 + 2 s td);
//  - loss 1%: the mean grows from p = 8 to 1024 by less than a quarter of
//    log2(1024/8)(t0 + s td), binomial's growth: nearly flat;
//  - loss 50%: the "nearly flat" does NOT hold on this model; the mean
//    stays within 2 (t0 + s td) of binomial (it grows like log2 p), and that
//    is what is checked. The table is printed.
TEST(McastChainSim, SmallMessageTimeInP) {
  constexpr uint64_t n = 1024;
  constexpr int kSeeds = 20;
  const double d = n / kRate, T = kT0 + d;
  const std::vector<uint32_t> ps = {8, 16, 32, 64, 128, 256, 512, 1024};
  const std::vector<double> losses = {0, 0.01, 0.1, 0.5};
  std::vector<std::vector<double>> mean(losses.size(), std::vector<double>(ps.size(), 0));
  std::vector<double> binomial(ps.size());
  for (size_t j = 0; j < ps.size(); ++j) {
    const uint32_t p = ps[j];
    binomial[j] = double(run(Algo::Binomial, p, n, n, 0, 1).completion) * 1e-12;
    for (size_t i = 0; i < losses.size(); ++i) {
      for (int seed = 1; seed <= kSeeds; ++seed) {
        const SimResult r = run(Algo::McastChain, p, n, n, losses[i], seed);
        const double t = double(r.completion) * 1e-12;
        ASSERT_NEAR(t, run_length_form(r, p, d), 1e-9) << "p=" << p << " loss=" << losses[i] << " seed=" << seed;
        if (losses[i] == 0) {
          ASSERT_NEAR(t, T + d, 1e-9) << p;
        }
        mean[i][j] += t / kSeeds;
      }
    }
  }
  std::printf("\n| p | loss 0 us | loss 1%% us | loss 10%% us | loss 50%% us | binomial us |\n|---|---|---|---|---|---|\n");
  for (size_t j = 0; j < ps.size(); ++j)
    std::printf("| %u | %.1f | %.1f | %.1f | %.1f | %.1f |\n", ps[j], mean[0][j] * 1e6, mean[1][j] * 1e6,
                mean[2][j] * 1e6, mean[3][j] * 1e6, binomial[j] * 1e6);
  const double log_growth = std::log2(1024.0 / 8) * T;
  EXPECT_LT(mean[1].back() - mean[1].front(), log_growth / 4);
  for (size_t j = 0; j < ps.size(); ++j) EXPECT_LE(mean[3][j], binomial[j] + 2 * T) << ps[j];
}

using Outcome = test::PlanOutcome;
Outcome plan(std::vector<std::string> args) { return test::run_plan(std::move(args)); }

TEST(McastChainSim, PlanTakesMcastLoss) {
  Outcome o = plan({"--algo", "mcast_chain", "--nodes", "64", "--size", "1K", "--mcast-loss", "0.5", "--json"});
  EXPECT_EQ(o.rc, 0) << o.err;
  EXPECT_NE(o.out.find("\"mcast_loss\":0.5"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("\"complete\":true"), std::string::npos) << o.out;
  // Another seed, another loss pattern: a different prediction.
  const Outcome a = plan({"--algo", "mcast_chain", "--nodes", "64", "--size", "1K", "--mcast-loss", "0.5",
                          "--mcast-seed", "2", "--json"});
  EXPECT_EQ(a.rc, 0) << a.err;
  o = plan({"--algo", "mcast_chain", "--nodes", "8", "--size", "1M", "--mcast-loss", "1"});
  EXPECT_EQ(o.rc, 0) << o.err;
  EXPECT_NE(o.out.find("multicast loss 1"), std::string::npos) << o.out;
  for (const char* algo : {"linear", "all"}) {
    o = plan({"--algo", algo, "--nodes", "8", "--size", "1M", "--mcast-loss", "0.5"});
    EXPECT_EQ(o.rc, 2) << algo;
    EXPECT_NE(o.err.find("--mcast-loss applies to multicast algorithms only"), std::string::npos) << o.err;
  }
}

}  // namespace
}  // namespace lanecast::algos::sim
