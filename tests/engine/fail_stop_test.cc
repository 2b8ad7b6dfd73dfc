// Fail-stop groups (members in their own processes): a member that dies is
// named by every survivor within twice the peer timeout, and a broken group
// fails every later broadcast at once instead of hanging on the dead member.
// Virtual time on the fabric; a member "dies" when its port goes dark.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "lanecast/lanecast.h"
#include "engine/api/member_internals.h"
#include "tests/engine/node_harness.h"
#include "tests/engine/port_decorator.h"

namespace lanecast::engine {
namespace {

constexpr uint64_t kTimeout = 20'000'000;  // 20 ms of virtual time
constexpr uint64_t kStep = 10'000;
constexpr uint32_t kSeg = 512;

// A port that stops sending and receiving when its process "dies".
class DeadPort final : public test::PortDecorator {
 public:
  using PortDecorator::PortDecorator;
  uint16_t rx_burst(uint16_t, rte_mbuf**, uint16_t) override { return 0; }
  uint16_t tx_burst(uint16_t, rte_mbuf** frames, uint16_t count) override {
    for (uint16_t i = 0; i < count; ++i) rte_pktmbuf_free(frames[i]);
    return count;
  }
};

test::NodeHarness::Options options(uint32_t nodes, algos::Rank dead, bool fail_stop) {
  test::NodeHarness::Options o;
  o.nodes = nodes;
  o.node.segment_bytes = kSeg;
  o.node.max_message_bytes = 64 * kSeg;
  o.node.peer_timeout_ns = kTimeout;
  o.node.fail_stop = fail_stop;
  o.wrap = [dead](uint32_t r, drivers::Port& inner) -> std::unique_ptr<drivers::Port> {
    if (r == dead) return std::make_unique<DeadPort>(inner);
    return nullptr;
  };
  return o;
}

std::vector<std::vector<std::byte>> buffers(uint32_t nodes) {
  std::vector<std::vector<std::byte>> b(nodes, std::vector<std::byte>(16 * kSeg));
  for (size_t i = 0; i < b[0].size(); ++i) b[0][i] = static_cast<std::byte>(i * 7 + 3);
  return b;
}

// Chain 0 -> 1 -> 2 -> 3 with rank 2 dead: rank 1 sees it go silent, rank 3
// only sees nothing arrive - and still names rank 2, told by rank 1.
TEST(FailStop, EverySurvivorNamesTheDeadRankInTime) {
  test::NodeHarness h(options(4, 2, true));
  auto bufs = buffers(4);
  const uint64_t start = h.now();
  const auto recs = h.broadcast(0, algos::Algo::Chain, bufs, 2 * kTimeout / kStep + 1000, kStep);
  EXPECT_EQ(recs[1].error, OpError::PeerSilent);
  EXPECT_EQ(recs[1].peer, 2u);
  EXPECT_EQ(recs[3].error, OpError::GroupBroken) << "rank 3 must learn who is gone, not just that nothing came";
  EXPECT_EQ(recs[3].peer, 2u);
  EXPECT_EQ(recs[3].reporter, 1u);
  for (algos::Rank r : {1u, 3u}) {
    ASSERT_NE(recs[r].op, 0u) << "rank " << r << " never finished";
    EXPECT_LE(recs[r].finish_ns - start, 2 * kTimeout) << "rank " << r;
  }
  // The root's part ended when rank 1 had everything; it heard of the loss
  // all the same (a notice), and so does every later broadcast, at once.
  h.run(100, kStep);
  EXPECT_GE(h.node(0).counters().fail_stop.rx_notices.get(), 1u);
  const uint64_t again = h.now();
  const auto next = h.broadcast(0, algos::Algo::Chain, bufs, 1000, kStep);
  for (algos::Rank r : {0u, 1u, 3u}) {
    EXPECT_EQ(next[r].error, OpError::GroupBroken) << "rank " << r;
    EXPECT_EQ(next[r].peer, 2u) << "rank " << r;
    EXPECT_LE(next[r].finish_ns - again, kStep * 4) << "rank " << r << " waited for the dead member";
  }
  EXPECT_EQ(lanecast::describe(next[0]).find("rank 2") != std::string::npos, true) << lanecast::describe(next[0]);
}

// The flood reaches members that never talk to the dead one or to whoever
// saw it: binomial from 0 over 8 with rank 4 dead.
TEST(FailStop, TheNewsReachesEveryMember) {
  test::NodeHarness h(options(8, 4, true));
  auto bufs = buffers(8);
  const auto recs = h.broadcast(0, algos::Algo::Binomial, bufs, 2 * kTimeout / kStep + 1000, kStep);
  h.run(100, kStep);
  // Binomial from 0: the root sends to 4 itself; 5, 6 and 7 get everything
  // through 4 and can only learn of it from others.
  EXPECT_EQ(recs[0].error, OpError::PeerSilent);
  EXPECT_EQ(recs[0].peer, 4u);
  for (algos::Rank r : {5u, 6u, 7u}) {
    EXPECT_EQ(recs[r].error, OpError::GroupBroken) << "rank " << r << ": " << lanecast::describe(recs[r]);
    EXPECT_EQ(recs[r].reporter, 0u) << "rank " << r;
  }
  for (algos::Rank r = 0; r < 8; ++r) {
    if (r == 4) continue;
    const bool ok = recs[r].error == OpError::None;
    // A member either finished its part before the loss, or failed naming 4.
    if (!ok) {
      EXPECT_EQ(recs[r].peer, 4u) << "rank " << r << ": " << lanecast::describe(recs[r]);
    }
  }
  const auto next = h.broadcast(0, algos::Algo::Binomial, bufs, 1000, kStep);
  for (algos::Rank r = 0; r < 8; ++r)
    if (r != 4) {
      EXPECT_EQ(next[r].error, OpError::GroupBroken) << "rank " << r << " did not hear";
    }
}

// Members of one process (fail_stop off) keep today's meaning: a silent
// member fails the broadcast it stalls, and the channels carry on after it.
TEST(FailStop, OffInOneProcess) {
  test::NodeHarness h(options(4, 2, false));
  auto bufs = buffers(4);
  const auto recs = h.broadcast(0, algos::Algo::Chain, bufs, 3 * kTimeout / kStep, kStep);
  EXPECT_EQ(recs[1].error, OpError::PeerSilent);
  EXPECT_EQ(recs[3].error, OpError::NoProgress);
  EXPECT_EQ(h.node(3).counters().fail_stop.rx_notices.get(), 0u);
}

// A port whose process dies when the test says so.
class DyingPort final : public test::PortDecorator {
 public:
  DyingPort(drivers::Port& inner, std::shared_ptr<bool> dead) : PortDecorator(inner), dead_(std::move(dead)) {}
  uint16_t rx_burst(uint16_t lane, rte_mbuf** frames, uint16_t count) override {
    return *dead_ ? 0 : PortDecorator::rx_burst(lane, frames, count);
  }
  uint16_t tx_burst(uint16_t lane, rte_mbuf** frames, uint16_t count) override {
    if (!*dead_) return PortDecorator::tx_burst(lane, frames, count);
    for (uint16_t i = 0; i < count; ++i) rte_pktmbuf_free(frames[i]);
    return count;
  }

 private:
  std::shared_ptr<bool> dead_;
};

// A group whose member `victim` dies when the test sets *dead.
test::NodeHarness::Options with_dying(uint32_t nodes, algos::Rank victim, bool fail_stop,
                                      const std::shared_ptr<bool>& dead) {
  test::NodeHarness::Options o = options(nodes, 99, fail_stop);
  o.wrap = [dead, victim](uint32_t r, drivers::Port& inner) -> std::unique_ptr<drivers::Port> {
    if (r == victim) return std::make_unique<DyingPort>(inner, dead);
    return nullptr;
  };
  return o;
}

// A member that only waits for data, when its upstream dies after it was
// heard from, fails for want of progress naming who went quiet - where no
// sender of its own could see a peer stop acknowledging (the testbed's kill
// test: a member killed during a bench's barrier left the others' errors
// naming nobody). Who was never heard from is never named.
TEST(FailStop, AMemberThatOnlyWaitsNamesWhoWentQuiet) {
  auto dead = std::make_shared<bool>(false);
  test::NodeHarness h(with_dying(4, 2, false, dead));
  auto bufs = buffers(4);
  const auto first = h.broadcast(0, algos::Algo::Chain, bufs, 3 * kTimeout / kStep, kStep);
  for (algos::Rank r = 0; r < 4; ++r) ASSERT_EQ(first[r].error, OpError::None) << lanecast::describe(first[r]);
  *dead = true;
  const auto recs = h.broadcast(0, algos::Algo::Chain, bufs, 3 * kTimeout / kStep, kStep);
  EXPECT_EQ(recs[1].error, OpError::PeerSilent);
  ASSERT_EQ(recs[3].error, OpError::NoProgress);
  EXPECT_EQ(recs[3].quiet_peer, 2u);
  EXPECT_GE(recs[3].quiet_ns, kTimeout);
  EXPECT_NE(lanecast::describe(recs[3]).find("rank 2 was silent longest"), std::string::npos)
      << lanecast::describe(recs[3]);
}

// A fail-stop group whose broadcast's root dies before it sends: nobody
// sends to the dead member, so nobody sees it stop acknowledging, and each
// survivor heard the other more recently or earlier than the root by chance
// of the last broadcasts (the testbed's kill test, killed between bench's
// barrier broadcasts: rank 0 named rank 2, which was waiting with it). Every
// survivor names the root.
TEST(FailStop, ALostRootIsNamedByThoseWaitingForIt) {
  auto dead = std::make_shared<bool>(false);
  test::NodeHarness h(with_dying(3, 1, true, dead));
  auto bufs = buffers(3);
  // Rank 0 last hears 2 in the first, 1 in the second; rank 2 last hears 0
  // in the first, 1 in the second: the root is not the quietest for either.
  for (const algos::Rank root : {2u, 1u}) {
    const auto ok = h.broadcast(root, algos::Algo::Linear, bufs, 3 * kTimeout / kStep, kStep);
    for (algos::Rank r = 0; r < 3; ++r) ASSERT_EQ(ok[r].error, OpError::None) << lanecast::describe(ok[r]);
  }
  *dead = true;
  const auto recs = h.broadcast(1, algos::Algo::Linear, bufs, 4 * kTimeout / kStep, kStep);
  for (const algos::Rank r : {0u, 2u}) {
    const std::string says = lanecast::describe(recs[r]);
    ASSERT_NE(recs[r].op, 0u) << "rank " << r << " never finished";
    const bool named = (recs[r].error == OpError::NoProgress && recs[r].quiet_peer == 1u) ||
                       (recs[r].error == OpError::GroupBroken && recs[r].peer == 1u);
    EXPECT_TRUE(named) << "rank " << r << ": " << says;
  }
}

TEST(FailStop, NobodyHeardIsNobodyNamed) {
  test::NodeHarness h(options(4, 2, false));  // rank 2 dead from the start: 3 never heard anyone
  auto bufs = buffers(4);
  const auto recs = h.broadcast(0, algos::Algo::Chain, bufs, 3 * kTimeout / kStep, kStep);
  ASSERT_EQ(recs[3].error, OpError::NoProgress);
  EXPECT_EQ(recs[3].quiet_peer, algos::kNoRank);
  EXPECT_EQ(lanecast::describe(recs[3]).find("silent longest"), std::string::npos);
}

}  // namespace
}  // namespace lanecast::engine
