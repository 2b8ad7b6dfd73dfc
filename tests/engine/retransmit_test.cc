// No frame is sent twice when none was lost. On a shaped link frames wait in
// the switch's queue, and on shared cores acks wait for their node's turn:
// round trips grow to many times the first one measured. That is not loss,
// and the channels must not take it for loss (they did: symmetric at 1 MiB
// re-sent 30-60% of its frames on a shaped network where no queue dropped
// anything). Virtual time: a rate-limited fabric with a deep switch buffer,
// and nodes that each cost 5 us of the one core they share.
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine/wire/wire.h"
#include "tests/engine/node_harness.h"
#include "tests/engine/dropping_port.h"

namespace lanecast::engine {
namespace {

struct Case {
  algos::Algo algo;
  uint64_t size;
  const char* name;
  bool paced;  // each node paced to the link's rate, as on the testbed
};

class NoLossNoResend : public ::testing::TestWithParam<Case> {};

TEST_P(NoLossNoResend, OnAShapedLinkWithBusyCores) {
  const Case c = GetParam();
  test::NodeHarness::Options o;
  o.nodes = 8;
  o.node.segment_bytes = 1400;
  o.node.max_message_bytes = c.size;
  o.fabric.rate_mbit = 200;         // the shaped testbed's rate
  o.fabric.latency_ns = 20'000;
  o.fabric.queue_frames = 1 << 16;  // deep: queues build, nothing is dropped
  o.poll_cost_ns = 5'000;           // 8 nodes share one core
  if (c.paced) o.node.lane_rate_bps = 200'000'000;
  o.node.pace_overhead_bytes = 24;  // the fabric counts preamble, FCS and gap
  o.payload_buffers = 2 * static_cast<uint32_t>((c.size + 1399) / 1400) + 1024;
  o.header_buffers = 1 << 16;
  test::NodeHarness h(o);
  std::vector<std::vector<std::byte>> bufs(8, std::vector<std::byte>(c.size));
  std::mt19937_64 rng(3);
  for (auto& b : bufs[0]) b = static_cast<std::byte>(rng());
  for (int round = 0; round < 2; ++round) {
    const auto recs = h.broadcast(0, c.algo, bufs, 2'000'000);
    for (uint32_t r = 0; r < 8; ++r) ASSERT_EQ(recs[r].error, OpError::None) << "rank " << r << " round " << round;
    ASSERT_TRUE(test::all_equal(bufs, 0));
  }
  const auto f = h.fabric().counters();
  ASSERT_EQ(f.lost + f.queue_drops + f.pool_drops, 0u) << "the fabric dropped frames: this test needs no loss";
  uint64_t resent = 0, duplicates = 0, timeouts = 0;
  for (uint32_t r = 0; r < 8; ++r) {
    resent += h.node(r).counters().tx_retransmits.get();
    duplicates += h.node(r).counters().rx_duplicate.get();
    timeouts += h.node(r).counters().channels.rto_timeouts.get();
  }
  EXPECT_EQ(resent, 0u) << "frames sent again with nothing lost (" << timeouts << " timeouts)";
  EXPECT_EQ(duplicates, 0u) << "receivers got frames twice";
}

// A core that stalls (a kernel transmit carrying a burst through the
// kernel's network took 5 ms on the shaped testbed) finds every deadline past
// when it looks again, while the acks it waits for have not reached it yet:
// they come in the next turns. That is the core's own stall, not loss; the
// member waits two turns (and for its receive queues to drain) before its
// timers may fire.
TEST(AStalledCore, DoesNotTakeItsOwnStallForLoss) {
  test::NodeHarness::Options o;
  o.nodes = 2;
  o.node.segment_bytes = 1400;
  o.node.max_message_bytes = 8 * 1400;
  test::NodeHarness h(o);
  std::vector<std::byte> a(8 * 1400), b(8 * 1400);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<std::byte>(i * 7 + 3);
  Submission s;
  s.op = h.next_op();
  s.root = 0;
  s.algo = algos::Algo::Chain;
  s.size = a.size();
  s.buffer = a.data();
  h.node(0).submit(s);
  s.buffer = b.data();
  h.node(1).submit(s);
  h.skip_op();
  h.step();                    // the root sends its 8 frames
  ASSERT_EQ(h.node(0).counters().tx_data.get(), 8u);
  h.advance(50'000'000);       // the core stalls 50 ms: past any timer
  for (int i = 0; i < 1000 && !(h.node(0).completions().ready(s.op) && h.node(1).completions().ready(s.op)); ++i)
    h.step();
  ASSERT_TRUE(h.node(0).completions().ready(s.op) && h.node(1).completions().ready(s.op));
  EXPECT_EQ(h.node(0).completions().record(s.op).error, OpError::None);
  EXPECT_EQ(h.node(1).completions().record(s.op).error, OpError::None);
  EXPECT_EQ(a, b);
  EXPECT_EQ(h.node(0).counters().tx_retransmits.get(), 0u) << "the root took its own stall for loss";
  EXPECT_EQ(h.node(1).counters().rx_duplicate.get(), 0u);
  EXPECT_GT(h.node(0).counters().timers_deferred.get(), 0u);
}

// Loses the first copy of the data frame carrying segment `segment` that
// reaches its node.
std::unique_ptr<test::DroppingPort> drop_one_segment(drivers::Port& inner, uint32_t segment) {
  return std::make_unique<test::DroppingPort>(inner, [segment](const wire::Parsed& p, uint32_t dropped) {
    return dropped == 0 && p.type == wire::FrameType::Data && p.data.segment == segment;
  });
}

// A channel's first frames go out before any round trip was measured, on the
// initial 10 ms timer; the acks that follow measure a round trip of a
// fraction of a millisecond and shorten the timer to about 1.5 ms. The last
// frame is lost, so only the timer finds it (no later frame reveals the
// hole): it must fire on the shortened deadline, not on the 10 ms one the
// node last looked at (it did: every loss of a broadcast's tail waited up
// to 10 ms, or a doubled RTO, before it was sent again).
TEST(ARetransmissionTimer, FiresOnTheDeadlineAFreshRoundTripShortened) {
  test::NodeHarness::Options o;
  o.nodes = 2;
  o.node.segment_bytes = 1400;
  o.node.max_message_bytes = 8 * 1400;
  test::DroppingPort* dropper = nullptr;
  o.wrap = [&](uint32_t rank, drivers::Port& inner) -> std::unique_ptr<drivers::Port> {
    if (rank != 1) return nullptr;
    auto d = drop_one_segment(inner, 7);
    dropper = d.get();
    return d;
  };
  test::NodeHarness h(o);
  std::vector<std::vector<std::byte>> bufs(2, std::vector<std::byte>(8 * 1400));
  for (size_t i = 0; i < bufs[0].size(); ++i) bufs[0][i] = static_cast<std::byte>(i * 13 + 1);
  const uint64_t start = h.now();
  const auto recs = h.broadcast(0, algos::Algo::Chain, bufs, 100'000, 10'000);  // 10 us per step
  ASSERT_EQ(dropper->dropped(), 1u);
  ASSERT_EQ(recs[0].error, OpError::None);
  ASSERT_EQ(recs[1].error, OpError::None);
  EXPECT_TRUE(test::all_equal(bufs, 0));
  EXPECT_EQ(h.node(0).counters().channels.rto_timeouts.get(), 1u);
  EXPECT_LT(recs[1].held_ns - start, 4'000'000u) << "the lost frame was sent again " << (recs[1].held_ns - start) / 1000
                                                  << " us after the start: on the initial 10 ms timer";
}

// A member whose core does not run for longer than the peer timeout (a host
// that stalled: both processes of a soak on one machine failed at the same
// second) finds its peer silent when it looks again - but it sent nothing
// meanwhile and heard nothing, through no fault of the peer. The silence is
// counted while the member looks: it sends the lost frame again, and the
// broadcast completes. (It failed: "rank 1 stopped acknowledging" on the
// root, "nothing arrived before the deadline" on rank 1, at the first look.)
TEST(ACoreStalledPastThePeerTimeout, DoesNotBlameThePeer) {
  test::NodeHarness::Options o;
  o.nodes = 2;
  o.node.segment_bytes = 1400;
  o.node.max_message_bytes = 8 * 1400;
  o.wrap = [](uint32_t rank, drivers::Port& inner) -> std::unique_ptr<drivers::Port> {
    return rank == 1 ? drop_one_segment(inner, 7) : nullptr;
  };
  test::NodeHarness h(o);
  std::vector<std::byte> a(8 * 1400), b(8 * 1400);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<std::byte>(i * 5 + 1);
  Submission s;
  s.op = h.next_op();
  s.root = 0;
  s.algo = algos::Algo::Chain;
  s.size = a.size();
  s.buffer = a.data();
  h.node(0).submit(s);
  s.buffer = b.data();
  h.node(1).submit(s);
  h.skip_op();
  h.run(20);                               // 7 frames arrive and are acknowledged; the last is lost
  h.advance(o.node.peer_timeout_ns + 1'000'000'000);  // every core stops for 4 s
  for (int i = 0; i < 100'000 && !(h.node(0).completions().ready(s.op) && h.node(1).completions().ready(s.op)); ++i)
    h.step(10'000);
  ASSERT_TRUE(h.node(0).completions().ready(s.op) && h.node(1).completions().ready(s.op));
  EXPECT_EQ(h.node(0).completions().record(s.op).error, OpError::None) << "the root blamed rank 1 for its own stall";
  EXPECT_EQ(h.node(1).completions().record(s.op).error, OpError::None) << "rank 1 blamed the root for its own stall";
  EXPECT_TRUE(a == b);
}

// The cases: symmetric at 1 MiB, chain at 8 MiB, linear at 64 KiB;
// paced to the link and not (the switch's buffer then holds the backlog).
INSTANTIATE_TEST_SUITE_P(Engine, NoLossNoResend,
                         ::testing::Values(Case{algos::Algo::Symmetric, 1 << 20, "symmetric_1M", true},
                                           Case{algos::Algo::Chain, 8 << 20, "chain_8M", true},
                                           Case{algos::Algo::Linear, 64 << 10, "linear_64K", true},
                                           Case{algos::Algo::Bintree, 1 << 20, "bintree_1M", true},
                                           Case{algos::Algo::Symmetric, 1 << 20, "symmetric_1M_unpaced", false},
                                           Case{algos::Algo::Chain, 8 << 20, "chain_8M_unpaced", false},
                                           Case{algos::Algo::Linear, 64 << 10, "linear_64K_unpaced", false}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace lanecast::engine
