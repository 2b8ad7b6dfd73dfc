// The network model itself, pinned down with toy machines whose timings are exact.
#include <gtest/gtest.h>

#include <numeric>

#include "algos/sim/simulator.h"
#include "tests/sim/toy_machines.h"

namespace lanecast::algos::sim {
namespace {

constexpr Picos kUs = kPicosPerMicro;

Network net_us(double t0_us, double mbytes_per_s = 1250) {
  Network n;
  n.latency = LatencyMap(static_cast<Picos>(t0_us * kUs));
  n.bytes_per_second = mbytes_per_s * 1e6;
  return n;
}

Plan plan_of(uint32_t p, uint64_t n, uint32_t s, uint16_t lanes = 1, Rank root = 0) {
  PlanParams pp;
  pp.nodes = p;
  pp.message_bytes = n;
  pp.segment_bytes = s;
  pp.lanes = lanes;
  pp.root = root;
  return Plan(pp);
}

template <class M, class... Extra>
SimResult run(const Plan& plan, const Network& net, Extra... extra) {
  return simulate(plan, [&](Rank r) { return std::make_unique<M>(plan, r, extra...); }, net);
}

SimResult run_script(const Plan& plan, const Network& net,
                     std::vector<std::vector<toy::Script::Send>> per_rank) {
  per_rank.resize(plan.nodes());
  SimOptions opt;
  opt.validate = false;
  return simulate(plan, [&](Rank r) { return std::make_unique<toy::Script>(per_rank[r]); }, net, opt);
}

std::vector<toy::Script::Send> whole(Rank to, uint32_t segments, Lane lane = 0) {
  std::vector<toy::Script::Send> v;
  for (SegmentIndex s = 0; s < segments; ++s) v.push_back({to, s, lane});
  return v;
}

// 1.25e9 B/s is exactly 800 ps per byte, so the closed forms below are exact.
constexpr Picos kTd = 800;

// A token bucket on every port (Network::port_burst_bytes, as tbf's burst):
// a full bucket passes floor(burst / frame) frames at once, the rest follow
// at the link rate - on the sender's port and again on the receiver's.
TEST(Model, APortBucketPassesItsBurstAtOnce) {
  const uint32_t s = 1000;  // 800 ns a frame at 1.25 GB/s
  for (const uint32_t frames : {4u, 10u, 20u}) {
    const Plan plan = plan_of(2, uint64_t{frames} * s, s);
    Network n = net_us(10);
    const SimResult plain = run<toy::Chain>(plan, n);
    n.port_burst_bytes = 10'000;  // 10 frames
    const SimResult bucket = run<toy::Chain>(plan, n);
    ASSERT_TRUE(plain.complete && bucket.complete);
    EXPECT_EQ(plain.completion, 10 * kUs + frames * s * kTd) << frames;
    // Within the bucket everything arrives t0 after it left; beyond it each
    // further frame waits a frame's time.
    const uint32_t beyond = frames > 10 ? frames - 10 : 0;
    EXPECT_EQ(bucket.completion, 10 * kUs + beyond * s * kTd) << frames;
  }
}

TEST(Model, ChainIsExactlyPipelined) {
  for (uint32_t p : {2u, 3u, 8u, 33u}) {
    const uint64_t n = 1 << 20, s = 8192;
    const Plan plan = plan_of(p, n, s);
    const SimResult r = run<toy::Chain>(plan, net_us(10));
    ASSERT_TRUE(r.complete) << r.problem;
    // The first segment pays t0 + s td per hop; the other n - s bytes stream behind.
    EXPECT_EQ(r.completion, (p - 1) * (10 * kUs + s * kTd) + (n - s) * kTd) << "p=" << p;
  }
}

TEST(Model, LinearSerialisesOnTheRootPort) {
  const uint32_t p = 9;
  const uint64_t n = 300'000;
  const Plan plan = plan_of(p, n, 4096);
  for (bool by_receiver : {true, false}) {
    const SimResult r = run<toy::Linear>(plan, net_us(25), by_receiver);
    ASSERT_TRUE(r.complete) << r.problem;
    EXPECT_EQ(r.completion, (p - 1) * n * kTd + 25 * kUs);
    if (by_receiver) {
      EXPECT_EQ(r.finish[1], n * kTd + 25 * kUs);
    }
  }
}

TEST(Model, StoreAndForwardBinomialMeetsItsRounds) {
  const uint64_t n = 64 * 1024;
  for (uint32_t p : {2u, 4u, 16u, 64u}) {
    const Plan plan = plan_of(p, n, 1024);
    const SimResult r = run<toy::Binomial>(plan, net_us(40));
    ASSERT_TRUE(r.complete) << r.problem;
    const uint32_t rounds = 32 - static_cast<uint32_t>(__builtin_clz(p - 1));
    EXPECT_EQ(r.completion, rounds * (40 * kUs + n * kTd)) << "p=" << p;
  }
}

TEST(Model, ByteAndPeerAccounting) {
  const uint32_t p = 6;
  const uint64_t n = 100'001;  // a short last segment
  const Plan plan = plan_of(p, n, 1000, 1, 2);
  const SimResult r = run<toy::Chain>(plan, net_us(5));
  ASSERT_TRUE(r.complete) << r.problem;
  for (Rank v = 0; v < p; ++v) {
    const Rank rank = plan.to_real(v);
    EXPECT_EQ(r.bytes_sent[rank], v + 1 < p ? n : 0) << rank;
    EXPECT_EQ(r.bytes_received[rank], v > 0 ? n : 0) << rank;
    EXPECT_EQ(r.frames_sent[rank], v + 1 < p ? plan.segments() : 0u) << rank;
    EXPECT_EQ(r.peers[rank], (v == 0 || v + 1 == p) ? 1u : 2u) << rank;
  }
  EXPECT_EQ(std::accumulate(r.bytes_sent.begin(), r.bytes_sent.end(), uint64_t{0}), (p - 1) * n);
}

// Peers above 16 384 nodes, where a row per sender replaces the p x p bit
// matrix: symmetric with 10 segments on 16 400 nodes - the 10 holders talk
// to every other rank (the root sent to them), the rest to the holders only,
// the root to the holders. The same counts as the matrix gives on 400 nodes.
TEST(Model, PeerCountsAboveTheBitMatrix) {
  for (const uint32_t p : {400u, 16400u}) {
    const Plan plan = plan_of(p, 10 * 1000, 1000);
    const SimResult r = simulate(Algo::Symmetric, plan, net_us(1));
    ASSERT_TRUE(r.complete) << r.problem;
    uint32_t holders = 0;
    for (Rank v = 1; v < p; ++v) {
      if (r.frames_sent[v] > 0) {
        ++holders;
        EXPECT_EQ(r.peers[v], p - 1) << "p=" << p << " holder " << v;
      } else {
        EXPECT_EQ(r.peers[v], 10u) << "p=" << p << " rank " << v;
      }
    }
    EXPECT_EQ(holders, 10u);
    EXPECT_EQ(r.peers[0], 10u);
  }
}

TEST(Model, IncastSerialisesOnTheReceiverPort) {
  const Plan plan = plan_of(4, 64 * 1024, 1024);
  const uint32_t m = plan.segments();
  const SimResult r = run_script(plan, net_us(10), {{}, whole(3, m), whole(3, m)});
  EXPECT_EQ(r.last_receive[3], 10 * kUs + 2 * 64 * 1024 * kTd);
  EXPECT_EQ(r.bytes_received[3], 2u * 64 * 1024);
}

TEST(Model, SwitchBackplaneLimitsTheTotal) {
  const Plan plan = plan_of(5, 64 * 1024, 1024);
  const uint32_t m = plan.segments();
  Network net = net_us(10);
  const auto script = std::vector<std::vector<toy::Script::Send>>{{}, whole(3, m), whole(4, m)};
  const SimResult free_switch = run_script(plan, net, script);
  EXPECT_EQ(free_switch.last_receive[4], 10 * kUs + 64 * 1024 * kTd);
  net.switch_capacity = 1.25e9;  // one link's worth for everybody
  const SimResult r = run_script(plan, net, script);
  EXPECT_EQ(std::max(r.last_receive[3], r.last_receive[4]), 10 * kUs + 2 * 64 * 1024 * kTd);
}

TEST(Model, BoundedSwitchBufferPausesSenders) {
  const uint64_t n = 1 << 20;
  const Plan plan = plan_of(4, n, 1024);
  const uint32_t m = plan.segments();
  const auto script = std::vector<std::vector<toy::Script::Send>>{{}, whole(3, m), whole(3, m)};
  Network net = net_us(10);
  const SimResult free_buffer = run_script(plan, net, script);
  // 64 frames: more than a pause/resume round trip keeps on the wire (the
  // resume reaches a sender and its next frame reaches the switch 2 t0 later:
  // 20 us / 0.82 us per frame, ~25 frames, per sender), so resuming senders
  // refill the port before it runs dry. 32 frames measured 11% slower.
  net.switch_buffer_frames = 64;
  const SimResult r = run_script(plan, net, script);
  // The receiver's port is the bottleneck either way ...
  EXPECT_EQ(r.last_receive[3], free_buffer.last_receive[3]);
  // ... but the senders cannot run ahead of it.
  EXPECT_EQ(std::max(free_buffer.finish[1], free_buffer.finish[2]), n * kTd);
  EXPECT_GE(std::max(r.finish[1], r.finish[2]), 3 * n * kTd / 2);
  // Pipelines that never queue are unaffected.
  const Plan chain = plan_of(8, 1 << 20, 8192);
  EXPECT_EQ(run<toy::Chain>(chain, net).completion, run<toy::Chain>(chain, net_us(10)).completion);
  net.tx_order = TxOrder::RoundRobin;
  EXPECT_THROW(run<toy::Chain>(chain, net), std::invalid_argument);
}

TEST(Model, PortCapacityAndFrameOverhead) {
  const uint64_t n = 1 << 20, s = 8192;
  const Plan plan = plan_of(4, n, s);
  Network net = net_us(10);
  net.port_capacity = 625e6;  // half the link rate: td doubles
  EXPECT_EQ(run<toy::Chain>(plan, net).completion, 3 * (10 * kUs + s * 2 * kTd) + (n - s) * 2 * kTd);
  net = net_us(10);
  net.frame_overhead_bytes = 64;
  net.frame_overhead_time = 100'000;  // 100 ns per frame
  const Picos d = (s + 64) * kTd + 100'000;
  EXPECT_EQ(run<toy::Chain>(plan, net).completion, 3 * (10 * kUs + d) + (n / s - 1) * d);
}

TEST(Model, LanesAreSeparatePortsUnlessShared) {
  const uint64_t n = 1 << 20;
  const Plan plan = plan_of(2, n, 8192, 2);
  Network net = net_us(10);
  const SimResult two = run<toy::Chain>(plan, net);  // even segments on lane 0, odd on lane 1
  EXPECT_EQ(two.completion, 10 * kUs + n / 2 * kTd);
  EXPECT_EQ(two.lane_bytes_sent[0], n / 2);
  EXPECT_EQ(two.lane_bytes_sent[1], n / 2);
  net.lanes_share_port = true;
  EXPECT_EQ(run<toy::Chain>(plan, net).completion, 10 * kUs + n * kTd);
}

TEST(Model, LatencyPerPairFromTheTopology) {
  const uint64_t n = 10'000;
  const Plan plan = plan_of(4, n, 1000);
  Network net = net_us(10);
  net.latency = LatencyMap::parse("site a 0-1\nsite b 2-3\nlatency a b 1ms\npair 0 3 2ms\n", 10 * kUs);
  const SimResult r = run<toy::Linear>(plan, net, true);
  EXPECT_EQ(r.finish[1], 10 * kUs + n * kTd);
  EXPECT_EQ(r.finish[2], 1000 * kUs + 2 * n * kTd);
  EXPECT_EQ(r.finish[3], 2000 * kUs + 3 * n * kTd);
}

TEST(Model, RoundRobinSharesTheRootPort) {
  const uint32_t p = 5;
  const uint64_t n = 64 * 1024;
  const Plan plan = plan_of(p, n, 1024);
  Network net = net_us(10);
  net.tx_order = TxOrder::RoundRobin;
  const SimResult r = run<toy::Linear>(plan, net, true);
  ASSERT_TRUE(r.complete) << r.problem;
  // Same total, but every receiver now finishes within one round of frames.
  EXPECT_EQ(r.completion, (p - 1) * n * kTd + 10 * kUs);
  EXPECT_GE(r.finish[1], r.completion - 2 * (p - 1) * 1024 * kTd);
}

TEST(Model, EmptyMessageAndSingleNode) {
  for (uint32_t p : {1u, 7u}) {
    const Plan plan = plan_of(p, 0, 1024);
    const SimResult r = run<toy::Chain>(plan, net_us(10));
    EXPECT_TRUE(r.complete) << r.problem;
    EXPECT_EQ(r.completion, 0u);
  }
  const Plan one = plan_of(1, 1 << 20, 1024);
  EXPECT_TRUE(run<toy::Chain>(one, net_us(10)).complete);
}

TEST(Model, RefusesImpossibleActions) {
  const Plan plan = plan_of(3, 4096, 1024);
  EXPECT_THROW(run<toy::Liar>(plan, net_us(10)), std::logic_error);
}

// Exactly-once delivery is checked by count and a multiset hash (simulator.cc):
// a duplicate that replaces another segment keeps the count and must still fail.
TEST(Model, RefusesDuplicateDeliveries) {
  constexpr SegmentIndex kNone = ~SegmentIndex{0};
  const Plan plan = plan_of(3, 8 * 1024, 1024);
  auto with = [&](SegmentIndex swap, bool extra) {
    return simulate(plan, [&](Rank r) { return std::make_unique<toy::Miscounter>(plan, r, swap, extra); },
                    net_us(10));
  };
  EXPECT_TRUE(with(kNone, false).complete);
  EXPECT_THROW(with(5, false), std::logic_error);
  EXPECT_THROW(with(kNone, true), std::logic_error);
}

TEST(Model, Deterministic) {
  const Plan plan = plan_of(37, 200'000, 1400, 1, 5);
  Network net = net_us(10);
  net.latency = LatencyMap::random_islands(37, 3, 10 * kUs, 100 * kUs, 400 * kUs, 7);
  for (TxOrder order : {TxOrder::Fifo, TxOrder::RoundRobin}) {
    net.tx_order = order;
    const SimResult a = run<toy::Binomial>(plan, net);
    const SimResult b = run<toy::Binomial>(plan, net);
    ASSERT_TRUE(a.complete) << a.problem;
    EXPECT_EQ(a.finish, b.finish);
    EXPECT_EQ(a.bytes_received, b.bytes_received);
    EXPECT_EQ(a.events, b.events);
  }
}

}  // namespace
}  // namespace lanecast::algos::sim
