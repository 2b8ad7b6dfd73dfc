// No frame is sent twice when none was lost. On a shaped link frames wait in
// the switch's queue, and on shared cores acks wait for their node's turn:
// round trips grow to many times the first one measured. That is not loss,
// and the channels must not take it for loss (they did: symmetric at 1 MiB
// re-sent 30-60% of its frames on a shaped network where no queue dropped
// anything). Virtual time: a rate-limited fabric with a deep switch buffer,
// and nodes that each cost 5 us of the one core they share.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "tests/engine/node_harness.h"

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
    timeouts += h.node(r).counters().rto_timeouts.get();
  }
  EXPECT_EQ(resent, 0u) << "frames sent again with nothing lost (" << timeouts << " timeouts)";
  EXPECT_EQ(duplicates, 0u) << "receivers got frames twice";
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
