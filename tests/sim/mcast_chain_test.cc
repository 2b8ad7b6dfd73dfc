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
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "algos/mcast_chain.h"
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
//  - loss 50%: the "nearly flat" does NOT hold on this model for the
//    last rank; the mean completion stays within 2 (t0 + s td) of binomial
//    (it grows like log2 p), and that is what is checked. What is flat at 50%
//    is the time of a typical rank: the mean over ranks of their finish times
//    grows by less than one hop from p = 8 to 1024 (a loser's distance to the
//    nearest holder before it is geometric, mean q / (1 - q) = 1 hop, whatever
//    p). The table is printed.
TEST(McastChainSim, SmallMessageTimeInP) {
  constexpr uint64_t n = 1024;
  constexpr int kSeeds = 20;
  const double d = n / kRate, T = kT0 + d;
  const std::vector<uint32_t> ps = {8, 16, 32, 64, 128, 256, 512, 1024};
  const std::vector<double> losses = {0, 0.01, 0.1, 0.5};
  std::vector<std::vector<double>> mean(losses.size(), std::vector<double>(ps.size(), 0));
  std::vector<double> binomial(ps.size());
  std::vector<double> typical(ps.size(), 0);  // loss 50%: mean over seeds of the mean rank finish
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
        if (losses[i] == 0.5) {
          double ranks = 0;
          for (Rank x = 1; x < p; ++x) ranks += double(r.finish[x]) * 1e-12;
          typical[j] += ranks / (p - 1) / kSeeds;
        }
      }
    }
  }
  std::printf("\n| p | loss 0 us | loss 1%% us | loss 10%% us | loss 50%% us | loss 50%%, mean rank us | binomial us |\n"
              "|---|---|---|---|---|---|---|\n");
  for (size_t j = 0; j < ps.size(); ++j)
    std::printf("| %u | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f |\n", ps[j], mean[0][j] * 1e6, mean[1][j] * 1e6,
                mean[2][j] * 1e6, mean[3][j] * 1e6, typical[j] * 1e6, binomial[j] * 1e6);
  const double log_growth = std::log2(1024.0 / 8) * T;
  EXPECT_LT(mean[1].back() - mean[1].front(), log_growth / 4);
  for (size_t j = 0; j < ps.size(); ++j) EXPECT_LE(mean[3][j], binomial[j] + 2 * T) << ps[j];
  EXPECT_LT(typical.back() - typical.front(), T) << "the typical rank's time at 50% loss is not flat";
}

// ---------------------------------------------------------------- process skew
//
// The paper's point: a multicast copy that reaches a process before it entered
// the broadcast (posted its receive) is lost; the root delay and the randomized
// synchronisation make the root start later, so fewer copies are lost and the
// ring has less to repair.

SimResult run_skewed(uint32_t p, uint64_t n, uint32_t s, const AlgoOptions& o, uint64_t op, const Network& net,
                     Rank root = 0) {
  PlanParams pp;
  pp.nodes = p;
  pp.root = root;
  pp.message_bytes = n;
  pp.segment_bytes = s;
  pp.algo = o;
  pp.op = op;
  const Plan plan(pp);
  SimResult r = simulate(Algo::McastChain, plan, net);
  EXPECT_TRUE(r.complete) << "p=" << p << " n=" << n << ": " << r.problem;
  return r;
}

uint64_t sum(const std::vector<uint64_t>& v) {
  uint64_t t = 0;
  for (uint64_t x : v) t += x;
  return t;
}

// Start times, one late rank: its multicast copy is lost, the ring frame that
// came before its start waits for it, and the broadcast ends when it has
// passed the segment on.
TEST(McastChainSim, LateRankLosesItsCopyAndTheRingWaits) {
  const Picos d = 819'200, T = 10'000'000 + d;  // 1 KiB at 1.25 GB/s; t0 + d
  Network net;
  net.start_times = {0, 0, 50'000'000, 0, 0};
  SimResult r = run_skewed(5, 1024, 1024, {}, 1, net);
  EXPECT_EQ(r.multicast_unposted, (std::vector<uint64_t>{0, 0, 1, 0, 0}));
  EXPECT_EQ(r.start, net.start_times);
  EXPECT_EQ(r.bytes_received[2], 1024u);  // the ring frame only
  EXPECT_EQ(r.finish[2], 50'000'000 + d);  // starts, takes the held frame, sends it on
  EXPECT_EQ(r.completion, 50'000'000 + d);
  EXPECT_EQ(r.finish[3], T + d);  // its own copy came in time

  // Drawn start times: the root at 0, the others within [0, skew], seeded.
  net.start_times.clear();
  net.start_skew = 20'000'000;
  net.skew_seed = 3;
  const std::vector<Picos> a = start_times(net, 64, 5), b = start_times(net, 64, 6);
  EXPECT_EQ(a[5], 0u);
  for (Rank x = 0; x < 64; ++x) {
    EXPECT_LE(a[x], net.start_skew);
    if (x != 5 && x != 6) {
      EXPECT_EQ(a[x], b[x]);  // another root moves no one else
    }
  }
  net.skew_seed = 4;
  EXPECT_NE(start_times(net, 64, 5), a);
  net.start_times = {0, 1};
  EXPECT_THROW(start_times(net, 3, 0), std::invalid_argument);
}

// The options on the simulator, exactly: the root delay postpones everything
// by the delay; the synchronisation by the synchronising rank's start plus
// one signal (t0 + a header-only frame's port time).
TEST(McastChainSim, RootDelayAndSyncExactly) {
  const Picos d = 819'200, T = 10'000'000 + d;
  Network net;
  AlgoOptions o;
  o.root_delay_ns = 7'000;
  SimResult r = run_skewed(9, 1024, 1024, o, 1, net, 4);
  EXPECT_EQ(r.completion, 7'000'000 + T + d);
  EXPECT_EQ(r.timers, 1u);
  EXPECT_EQ(r.signals, 0u);

  o = {};
  o.sync_seed = 77;
  const Rank c = mcast_sync_rank(77, 5, 9, 4);
  net.start_times.assign(9, 0);
  net.start_times[c] = 30'000'000;
  net.frame_overhead_bytes = 64;  // d0 = 64 B of port time, and every frame carries 64 B more
  const Picos d0 = 51'200, d64 = d + d0;
  r = run_skewed(9, 1024, 1024, o, 5, net, 4);
  EXPECT_EQ(r.signals, 1u);
  EXPECT_EQ(r.timers, 0u);
  EXPECT_EQ(sum(r.multicast_unposted), 0u);
  EXPECT_EQ(r.completion, 30'000'000 + 10'000'000 + d0 + 10'000'000 + 2 * d64);
  // Both: the later of the two.
  o.root_delay_ns = 45'000;
  r = run_skewed(9, 1024, 1024, o, 5, net, 4);
  EXPECT_EQ(r.completion, 45'000'000 + 10'000'000 + 2 * d64);
}

// Skew is the network's, not mcast_chain's: every registered algorithm
// completes when ranks start late, no rank finishes before it started, and a
// rank that starts 1 ms late holds every broadcast back until then (its frames
// wait for it).
TEST(McastChainSim, EveryAlgorithmUnderSkew) {
  for (const auto& info : algorithms()) {
    PlanParams pp;
    pp.nodes = 9;
    pp.root = 2;
    pp.lanes = info.id == Algo::Multilane ? 2 : 1;
    pp.message_bytes = 64 << 10;
    pp.segment_bytes = 1400;
    const Plan plan(pp);
    Network net;
    net.start_skew = 50'000'000;
    SimResult r = simulate(info.id, plan, net);
    ASSERT_TRUE(r.complete) << info.name << ": " << r.problem;
    for (Rank x = 0; x < 9; ++x) EXPECT_GE(r.finish[x], r.start[x]) << info.name << " rank " << x;
    net.start_times.assign(9, 0);
    net.start_times[6] = 1'000'000'000;
    r = simulate(info.id, plan, net);
    ASSERT_TRUE(r.complete) << info.name << ": " << r.problem;
    EXPECT_GE(r.finish[6], Picos{1'000'000'000}) << info.name;
  }
}

// The simulator refuses a second pending timer and a signal to oneself.
class Misuse final : public Machine {
 public:
  explicit Misuse(int how) : how_(how) {}
  void start(Actions& out) override {
    if (how_ == 0) {
      out.arm(1, 1);
      out.arm(2, 2);
    } else if (how_ == 2) {
      out.arm(1, 1);  // and done() at once: a timer left pending
    } else {
      out.signal(0, 1);
    }
  }
  void on_segment(SegmentIndex, Rank, Lane, Actions&) override {}
  bool done() const override { return how_ == 2; }

 private:
  int how_;
};

TEST(McastChainSim, SimulatorRefusesTimerAndSignalMisuse) {
  PlanParams pp;
  pp.nodes = 2;
  pp.message_bytes = 10;
  const Plan plan(pp);
  for (int how : {0, 1, 2}) {
    try {
      simulate(plan, [how](Rank) { return std::make_unique<Misuse>(how); }, Network{});
      ADD_FAILURE() << "misuse " << how << " accepted";
    } catch (const std::logic_error& e) {
      const char* expected[] = {"while another is pending", "signals rank 0", "done() with a timer pending"};
      EXPECT_NE(std::string(e.what()).find(expected[how]), std::string::npos)
          << e.what();
    }
  }
}

// Copies lost to skew, counted the simulator's way (a copy is lost when its
// uncontended arrival, t0 + d after it left the root, precedes the rank's
// start): the root's port sends multicast k at A + 2 k d, A when it begins.
uint64_t expected_unposted(const std::vector<Picos>& start, Rank root, uint32_t m, Picos A, Picos t0, Picos d) {
  uint64_t lost = 0;
  for (Rank r = 0; r < start.size(); ++r)
    for (uint32_t k = 0; k < m && r != root; ++k) lost += A + 2 * k * d + t0 + d < start[r];
  return lost;
}

// The paper's effect, as a table (docs/algorithms.md, mcast_chain): p = 64 and
// 1024, 1 KiB and 64 KiB (1 KiB segments), process skew uniform in [0, 20 us]
// and [0, 100 us], no network loss; no option, root delay = the skew's
// maximum, randomized synchronisation. Means over 5 skew seeds. Asserted per
// run: every node delivers every segment exactly once (the simulator's
// checks); the copies lost to skew are exactly the count above; a root delay
// of at least the maximum skew loses none.
TEST(McastChainSim, SkewTableRootDelayAndSync) {
  constexpr uint32_t s = 1024;
  constexpr int kSeeds = 5;
  const Picos t0 = 10'000'000, d = 819'200;
  std::printf("\n| p | size | skew max | option | completion us | copies lost to skew | ring frames |\n"
              "|---|---|---|---|---|---|---|\n");
  for (uint32_t p : {64u, 1024u})
    for (uint64_t n : {uint64_t{1024}, uint64_t{64} << 10})
      for (Picos skew : {Picos{20'000'000}, Picos{100'000'000}})
        for (int option = 0; option < 3; ++option) {
          double completion = 0, unposted = 0, ring = 0;
          for (int seed = 1; seed <= kSeeds; ++seed) {
            Network net;
            net.start_skew = skew;
            net.skew_seed = seed;
            AlgoOptions o;
            if (option == 1) o.root_delay_ns = skew / 1000;
            if (option == 2) o.sync_seed = 1000 + seed;
            const uint64_t op = 1;
            const SimResult r = run_skewed(p, n, s, o, op, net);
            ASSERT_TRUE(r.complete);
            const uint32_t m = static_cast<uint32_t>(n / s);
            Picos A = 0;  // when the root begins
            if (option == 1) A = skew;
            if (option == 2) A = r.start[mcast_sync_rank(o.sync_seed, op, p, 0)] + t0;
            const uint64_t lost = sum(r.multicast_unposted);
            ASSERT_EQ(lost, expected_unposted(r.start, 0, m, A, t0, d)) << p << " " << n << " " << option;
            if (option == 1) {
              ASSERT_EQ(lost, 0u);
            }
            ASSERT_EQ(sum(r.multicast_lost), 0u);
            const uint64_t frames = sum(r.frames_sent) - m;  // all but the root's multicasts
            ASSERT_EQ(frames, uint64_t{p - 1} * m);          // every node but the last passes each on
            completion += double(r.completion) * 1e-6 / kSeeds;
            unposted += double(lost) / kSeeds;
            ring += double(frames) / kSeeds;
          }
          std::printf("| %u | %s | %.0f us | %s | %.1f | %.1f | %.0f |\n", p, n == 1024 ? "1 KiB" : "64 KiB",
                      double(skew) * 1e-6, option == 0 ? "none" : option == 1 ? "root delay = skew max" : "sync",
                      completion, unposted, ring);
        }
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

// plan models mcast_chain as the engine runs it by default: repair on
// request, so without loss each link carries each segment once and 8 MiB
// takes about n td + t0 (the paper's ring, --mcast-repair ring, twice that).
TEST(McastChainSim, PlanRepairsOnRequestUnlessToldTheRing) {
  const auto predicted = [](const Outcome& o) {
    const size_t at = o.out.find("\"predicted_us\":");
    return at == std::string::npos ? -1.0 : std::stod(o.out.substr(at + 15));
  };
  const double n_td = 8.0 * 1048576 / 1250;  // us at 1250 MB/s
  const std::vector<std::string> base = {"--algo", "mcast_chain", "--nodes", "8", "--size", "8M", "--json"};
  Outcome o = plan(base);
  ASSERT_EQ(o.rc, 0) << o.err;
  EXPECT_NEAR(predicted(o), n_td + 10, 0.02 * n_td) << o.out;
  std::vector<std::string> ring = base;
  ring.insert(ring.end(), {"--mcast-repair", "ring"});
  o = plan(ring);
  ASSERT_EQ(o.rc, 0) << o.err;
  EXPECT_NEAR(predicted(o), 2 * n_td + 10, 0.02 * n_td) << o.out;
  o = plan({"--algo", "mcast_chain", "--nodes", "8", "--size", "1M", "--mcast-repair", "both"});
  EXPECT_EQ(o.rc, 2);
  EXPECT_NE(o.err.find("--mcast-repair: 'both': request or ring"), std::string::npos) << o.err;
  o = plan({"--algo", "chain", "--nodes", "8", "--size", "1M", "--mcast-repair", "ring"});
  EXPECT_EQ(o.rc, 2);
  EXPECT_NE(o.err.find("--mcast-repair applies to --algo mcast_chain only"), std::string::npos) << o.err;
}

// --root-delay, --sync-seed, --skew: in the JSON, and the root delay at the
// maximum skew loses no copy to it, where no option loses some.
TEST(McastChainSim, PlanTakesRootDelaySyncAndSkew) {
  const std::vector<std::string> base = {"--algo", "mcast_chain", "--nodes", "64", "--size", "1K",
                                         "--segment", "1K", "--skew", "20", "--json"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.begin(), base.begin(), base.end());
    return plan(more);
  };
  Outcome o = with({});
  EXPECT_EQ(o.rc, 0) << o.err;
  EXPECT_NE(o.out.find("\"skew_us\":20"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("\"multicast_unposted\":0,"), std::string::npos) << o.out;  // some lost
  o = with({"--root-delay", "20"});
  EXPECT_EQ(o.rc, 0) << o.err;
  EXPECT_NE(o.out.find("\"root_delay_us\":20.0,\"sync_seed\":0,\"sync_rank\":null"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("\"multicast_unposted\":0,"), std::string::npos) << o.out;
  o = with({"--sync-seed", "7"});
  EXPECT_EQ(o.rc, 0) << o.err;
  EXPECT_NE(o.out.find("\"sync_seed\":7,\"sync_rank\":" + std::to_string(mcast_sync_rank(7, 1, 64, 0))),
            std::string::npos)
      << o.out;
  o = plan({"--algo", "binomial", "--nodes", "8", "--size", "1K", "--root-delay", "5"});
  EXPECT_EQ(o.rc, 2);
  EXPECT_NE(o.err.find("--root-delay applies to --algo mcast_chain only, not to binomial"), std::string::npos)
      << o.err;
}

}  // namespace
}  // namespace lanecast::algos::sim
