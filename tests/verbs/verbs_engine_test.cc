// The engine over verbs ports on the UD model: every algorithm delivers
// every byte to every member, multicast losing half its datagrams is
// repaired, and a receive queue run dry is counted and comes back. Against
// a model of UD semantics (tests/verbs/ud_model.h), not an adapter.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "algos/registry.h"
#include "tests/verbs/verbs_harness.h"

namespace lanecast::test {
namespace {

using drivers::verbs::VerbsPort;

std::vector<std::vector<std::byte>> buffers(uint32_t nodes, size_t size, uint64_t seed) {
  std::vector<std::vector<std::byte>> bufs(nodes, std::vector<std::byte>(size));
  std::mt19937_64 rng(seed);
  for (auto& b : bufs[0]) b = static_cast<std::byte>(rng());
  return bufs;
}

bool every_member_done(const std::vector<engine::CompletionRecord>& recs, uint32_t op) {
  for (const auto& r : recs)
    if (r.op != op || r.error != engine::OpError::None) return false;
  return true;
}

VerbsHarness::Options options(uint32_t nodes, uint16_t lanes, uint64_t max_message) {
  VerbsHarness::Options o;
  o.nodes = nodes;
  o.lanes = lanes;
  o.node.segment_bytes = 1900;  // + lanecast's headers, within the 2048-byte datagrams
  o.node.max_message_bytes = max_message;
  return o;
}

TEST(VerbsEngine, EveryAlgorithmDeliversEveryByteOverModelPorts) {
  VerbsHarness h(options(8, 2, 1 << 20));
  uint32_t op = 0;
  for (const algos::AlgoInfo& a : algos::algorithms()) {
    for (size_t size : {size_t{2}, size_t{300'000}}) {
      SCOPED_TRACE(std::string(a.name) + " " + std::to_string(size) + " B");
      auto bufs = buffers(8, size, 7 + op);
      const algos::Rank root = static_cast<algos::Rank>(op % 8);
      if (root != 0) std::swap(bufs[0], bufs[root]);
      const auto recs = h.broadcast(root, a.id, bufs);
      ++op;
      EXPECT_TRUE(every_member_done(recs, op));
      for (uint32_t r = 0; r < 8; ++r) EXPECT_EQ(bufs[r], bufs[root]) << "member " << r;
    }
  }
  // Nothing was refused by the model or the port on the way.
  const auto c = h.model().counters();
  EXPECT_EQ(c.prot_errors, 0u);
  EXPECT_EQ(c.mtu_errors, 0u);
  EXPECT_EQ(c.qkey_drops, 0u);
  for (uint32_t r = 0; r < 8; ++r) {
    const VerbsPort::Counters pc = h.port(r).counters();
    EXPECT_EQ(pc.tx_unresolved + pc.tx_errors + pc.rx_errors + pc.tx_too_many_segments, 0u) << "member " << r;
    EXPECT_GT(pc.tx_posted, 0u);
  }
  // mcast_chain multicast for real: the model copied group datagrams.
  EXPECT_GT(c.copies_delivered, c.datagrams_sent);
}

TEST(VerbsEngine, MulticastLosingHalfItsDatagramsIsRepaired) {
  VerbsHarness::Options o = options(6, 1, 1 << 20);
  o.model.multicast_loss = 0.5;
  o.model.seed = 5;
  VerbsHarness h(o);
  for (uint32_t i = 0; i < 6; ++i) EXPECT_TRUE(h.node(i).multicast_fallback().empty()) << h.node(i).multicast_fallback();
  auto bufs = buffers(6, 600'000, 3);
  const auto recs = h.broadcast(0, algos::Algo::McastChain, bufs, 2'000'000);
  EXPECT_TRUE(every_member_done(recs, 1));
  for (uint32_t r = 1; r < 6; ++r) EXPECT_EQ(bufs[r], bufs[0]) << "member " << r;
  const auto c = h.model().counters();
  EXPECT_GT(c.loss_drops, 100u);  // about half of 316 segments x 5 members
  uint64_t datagrams = 0;
  for (uint32_t r = 1; r < 6; ++r) datagrams += h.node(r).counters().rx_datagrams.get();
  EXPECT_GT(datagrams, 0u);  // the other half came by multicast
}

TEST(VerbsEngine, AReceiveQueueRunDryIsCountedAndComesBack) {
  // A member that stops polling while the root sends (a stalled core):
  // its adapter consumes the posted receives, then drops what arrives (no
  // receive posted). The port counts the queue found empty, the engine
  // repairs the lost frames, and the queue is full again afterwards.
  VerbsHarness::Options o = options(4, 1, 2 << 20);
  o.rq_depth = 64;
  VerbsHarness h(o);
  h.pause(2, 20, 3000);  // member 2 skips steps 20..3000
  auto bufs = buffers(4, 1 << 20, 9);
  const auto recs = h.broadcast(0, algos::Algo::Chain, bufs, 4'000'000);
  EXPECT_TRUE(every_member_done(recs, 1));
  for (uint32_t r = 1; r < 4; ++r) EXPECT_EQ(bufs[r], bufs[0]) << "member " << r;
  const VerbsPort::Counters c = h.port(2).counters();
  EXPECT_GT(c.rq_empty, 0u);
  EXPECT_GT(c.rq_low, 0u);
  EXPECT_GT(h.model().qp_counts(h.port(2).qpn(0)).rnr_drops, 0u);
  uint64_t retransmits = 0;
  for (uint32_t r = 0; r < 4; ++r) retransmits += h.node(r).counters().tx_retransmits.get();
  EXPECT_GT(retransmits, 0u);
  // Recovered: idle again, every member's queue is full to within one
  // burst of receives (they are posted 32 at a time).
  for (int i = 0; i < 100; ++i) h.step();
  for (uint32_t r = 0; r < 4; ++r) EXPECT_GT(h.port(r).receives_posted(0), 64u - 32u) << "member " << r;
  auto again = buffers(4, 100'000, 10);
  EXPECT_TRUE(every_member_done(h.broadcast(0, algos::Algo::Chain, again), 2));
  for (uint32_t r = 1; r < 4; ++r) EXPECT_EQ(again[r], again[0]);
}

}  // namespace
}  // namespace lanecast::test
