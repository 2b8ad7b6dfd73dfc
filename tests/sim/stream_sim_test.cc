// The stream model (algos/sim/stream_sim.h) against closed forms: a lone
// message crosses each hop in t0 + d; a saturated tree carries what its
// busiest port can send; a multicast leaves the publisher once; messages
// larger than a batch arrive whole after their last piece; the latency
// histogram reads percentiles back within 1%.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

#include "algos/sim/latency_histogram.h"
#include "algos/sim/stream_sim.h"

namespace lanecast::algos::sim {
namespace {

constexpr Picos kUs = kPicosPerMicro;

StreamModel model(uint32_t nodes, uint32_t fanout) {
  StreamModel m;
  m.nodes = nodes;
  m.fanout = fanout;
  m.t0 = 10 * kUs;
  m.bytes_per_second = 1e9;  // 1 byte per ns
  m.segment = 1428;
  return m;
}

// d for a batch of `bytes` (heads included) on a 1 GB/s link: bytes ns.
Picos d(uint64_t bytes) { return bytes * 1000; }

TEST(StreamModel, ALoneMessageCrossesEachHopInT0PlusItsFrame) {
  for (const uint32_t k : {1u, 2u, 3u}) {
    StreamModel m = model(40, k);
    m.rate = 1000;  // one message every ms: each alone in its batch
    m.messages = 20;
    const StreamPrediction r = simulate_stream(m);
    const Picos hop = m.t0 + d(16 + 64);
    // The deepest member, the last child of every node on its way, waits
    // for its earlier siblings' copies at every hop: k - 1 more frames per hop.
    uint32_t depth = 0;
    for (uint64_t v = m.nodes - 1; v != 0; v = (v - 1) / k) ++depth;
    EXPECT_EQ(r.depth, depth) << "k " << k;
    EXPECT_EQ(r.batches, 20u);
    EXPECT_EQ(r.copies, 20u * (m.nodes - 1));
    // The last member is the last child at every hop on its way only for k = 1.
    if (k == 1) {
      EXPECT_EQ(r.max, depth * hop);
    }
    EXPECT_LE(r.max, depth * (hop + (k - 1) * d(80)));
    EXPECT_GE(r.max, depth * hop);
    // Every member of the first hop: the publisher's child 0 after one hop.
    EXPECT_GE(r.p50, hop);
  }
}

// All messages at once: every batch full (1428 bytes; as the engine, a
// message that does not fit goes on in the next batch, under a head of its
// own). A node with k children sends each batch k times.
double saturated_rate(const StreamPrediction& r, uint64_t messages, uint32_t copies_per_batch) {
  return static_cast<double>(messages) / (static_cast<double>(r.batches * copies_per_batch) * 1428e-9);
}

TEST(StreamModel, ASaturatedTreeCarriesWhatItsBusiestPortSends) {
  // Enough batches that filling the pipe (a hop per member of the chain) is
  // under 1% of the time.
  for (const uint32_t k : {1u, 2u, 4u}) {
    StreamModel m = model(15, k);
    m.messages = 1'000'000;
    const StreamPrediction r = simulate_stream(m);
    // 80 bytes a message, and a head more for each one split: 17.0-17.85 a batch.
    EXPECT_GE(r.messages_per_batch, 1428.0 / 84);
    EXPECT_LE(r.messages_per_batch, 1428.0 / 80);
    EXPECT_NEAR(r.msgs_per_second / saturated_rate(r, m.messages, k), 1.0, 0.01) << "k " << k;
  }
  // Linear: the publisher sends every batch to everyone.
  StreamModel lin = model(9, 8);
  lin.messages = 170'000;
  const StreamPrediction r = simulate_stream(lin);
  EXPECT_NEAR(r.msgs_per_second / saturated_rate(r, lin.messages, 8), 1.0, 0.01);
}

TEST(StreamModel, AMulticastLeavesThePublisherOnceAndReachesEveryoneTogether) {
  StreamModel m = model(64, 2);
  m.multicast = true;
  m.messages = 170'000;
  const StreamPrediction r = simulate_stream(m);
  EXPECT_EQ(r.copies, r.batches);
  EXPECT_EQ(r.depth, 1u);
  EXPECT_NEAR(r.msgs_per_second / saturated_rate(r, m.messages, 1), 1.0, 0.01);
  m.rate = 1000;
  m.messages = 10;
  const StreamPrediction lone = simulate_stream(m);
  EXPECT_EQ(lone.max, m.t0 + d(80));
  EXPECT_EQ(lone.p50, lone.max);
}

TEST(StreamModel, AMessageLargerThanABatchIsDeliveredAfterItsLastPiece) {
  StreamModel m = model(2, 1);
  m.message_bytes = 4000;  // 1412 + 1412 + 1176 bytes: three batches
  m.rate = 100;
  m.messages = 3;
  const StreamPrediction r = simulate_stream(m);
  EXPECT_EQ(r.batches, 9u);
  EXPECT_EQ(r.deliveries, 3u);
  // The pieces leave back to back; the last arrives t0 + d after it started.
  const Picos expect = d(1428) + d(1428) + d(16 + 1176) + m.t0;
  EXPECT_EQ(r.max, expect);
}

TEST(StreamModel, AnOfferedRateAboveWhatTheTreeCarriesQueuesAtThePublisher) {
  StreamModel m = model(8, 1);
  m.rate = 1e6;  // a message per us; one 80-byte batch takes 80 ns alone
  m.messages = 100'000;
  const StreamPrediction fast = simulate_stream(m);
  EXPECT_NEAR(fast.msgs_per_second / 1e6, 1.0, 0.01) << "carried as offered";
  EXPECT_LT(fast.p999, 2 * (m.t0 + d(80)) * 7);
  m.frame_time = 5 * kUs;  // now a frame costs 5 us: at most 200k batches/s
  const StreamPrediction slow = simulate_stream(m);
  // Batches fill as the port falls behind: the rate holds, the latency grows.
  EXPECT_GT(slow.messages_per_batch, 4.0);
  EXPECT_NEAR(slow.msgs_per_second / 1e6, 1.0, 0.02);
  EXPECT_GT(slow.p50, fast.p50);
}

TEST(StreamModel, RefusesWhatItCannotModel) {
  StreamModel m = model(1, 1);
  EXPECT_THROW(simulate_stream(m), std::invalid_argument);
  m = model(4, 0);
  EXPECT_THROW(simulate_stream(m), std::invalid_argument);
  m = model(4, 2);
  m.segment = 16;
  EXPECT_THROW(simulate_stream(m), std::invalid_argument);
  m = model(4, 2);
  m.messages = 0;
  EXPECT_NE(stream_model_problem(m), "");
}

TEST(LatencyHistogram, PercentilesWithinOnePercent) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> dist(std::log(20e6), 1.5);
  std::vector<Picos> all;
  LatencyHistogram h;
  for (int i = 0; i < 200'000; ++i) {
    const auto v = static_cast<Picos>(dist(rng));
    all.push_back(v);
    h.add(v);
  }
  std::sort(all.begin(), all.end());
  for (const double q : {0.5, 0.9, 0.99, 0.999}) {
    const auto exact = static_cast<double>(all[static_cast<size_t>(q * static_cast<double>(all.size())) - 1]);
    EXPECT_NEAR(static_cast<double>(h.quantile(q)) / exact, 1.0, 0.01) << q;
  }
  EXPECT_EQ(h.max(), all.back());
  EXPECT_EQ(h.quantile(1.0), all.back());
}

}  // namespace
}  // namespace lanecast::algos::sim
