// Hellos of a group with a key, on the in-process fabric: two members find
// each other by discovery while a third port - an attacker's - sends one of
// the members' own hellos again, captured earlier, from its own address. A
// hello is what a member learns a peer's address from, so its tag covers
// the link header: the hello sent again does not open (counted), and the
// group forms with the members' real addresses. (When the tag did not cover
// it, the hello opened everywhere: rank 1, in its new life, gave up -
// "another member at <the attacker's address> was started as rank 1 too" -
// and rank 0 waited for it until its time-out.)
//
// And what discovery does with the other frames it reads: a member that was
// done first begins the first operation while its peers still look for the
// group. Those frames of the group wait for the member's node; they were
// dropped, and every group's start cost a retransmission timeout.
#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "drivers/fabric/fabric.h"
#include "engine/bootstrap/wire_discovery.h"
#include "engine/wire/wire.h"
#include "tests/engine/eal_env.h"

namespace lanecast::engine::bootstrap {
namespace {

constexpr uint16_t kLink = 14;

uint64_t steady_ns() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

class SealedHellos : public ::testing::Test {
 protected:
  void SetUp() override {
    lanecast::test::start_eal();
    pool_ = lanecast::test::test_pool("sealed_hellos");
    ASSERT_NE(pool_, nullptr);
    drivers::Fabric::Options fo;
    fo.nodes = 3;  // ranks 0 and 1, and the attacker
    fo.pool = pool_;
    fabric_ = std::make_unique<drivers::Fabric>(fo);
    spec_.name = "sealed-hellos";
    spec_.id = 9;
    spec_.bootstrap = "discovery";
    for (uint32_t r = 0; r < 2; ++r) spec_.members.push_back(MemberSpec{r, {"fabric"}, {}});
    spec_.key = AuthKey::from_hex(std::string(64, '7'), "test");
    wires_ = std::thread([this] {  // the switch: moves frames until the test ends
      while (!stop_.load()) {
        fabric_->poll(steady_ns());
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
    });
  }
  void TearDown() override {
    stop_.store(true);
    wires_.join();
    fabric_.reset();
  }

  Endpoint endpoint(uint32_t rank) {
    return Endpoint{rank, {fabric_->port(rank).address()}, fresh_incarnation()};
  }
  // One member's discovery, as a joining process runs it: its table, or
  // what it said when it gave up (`error`); what it refused (`steps`).
  struct Outcome {
    std::optional<EndpointTable> table;
    std::string error, steps;
    std::vector<Bootstrap::EarlyFrame> early;  // the caller frees them
  };
  Outcome discover(uint32_t rank, double timeout_ms) {
    GroupSpec s = spec_;
    s.bootstrap_timeout_ms = timeout_ms;
    auto boot = make_wire_discovery(s, fabric_->port(rank), pool_);
    Outcome o;
    try {
      o.table = boot->exchange(endpoint(rank));
    } catch (const std::runtime_error& e) {
      o.error = e.what();
    }
    o.steps = boot->steps();
    o.early = boot->take_early_frames();
    return o;
  }
  // Ranks 0 and 1 at once, rank 1 on a thread of its own.
  void discover_both(Outcome& zero, Outcome& first) {
    std::thread t([&] { first = discover(1, 3000); });
    zero = discover(0, 3000);
    t.join();
  }
  // Frames waiting at a port, taken (and handed to the caller).
  std::vector<rte_mbuf*> take_all(uint32_t node) {
    std::vector<rte_mbuf*> out;
    rte_mbuf* burst[32];
    for (uint16_t n; (n = fabric_->port(node).rx_burst(0, burst, 32)) > 0;) out.insert(out.end(), burst, burst + n);
    return out;
  }
  static void free_all(std::vector<rte_mbuf*>& frames) {
    for (rte_mbuf* m : frames) rte_pktmbuf_free(m);
    frames.clear();
  }

  rte_mempool* pool_ = nullptr;
  std::unique_ptr<drivers::Fabric> fabric_;
  GroupSpec spec_;
  std::atomic<bool> stop_{false};
  std::thread wires_;
};

TEST_F(SealedHellos, AHelloSentAgainFromAnotherAddressTeachesNothing) {
  // Rank 1 alone for a while (it gives up); the attacker keeps its hellos,
  // rank 0 - not started yet - never sees them.
  const Outcome alone = discover(1, 60);
  ASSERT_FALSE(alone.table);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::vector<rte_mbuf*> seen = take_all(2), missed = take_all(0);
  free_all(missed);
  rte_mbuf* hello = nullptr;
  for (rte_mbuf* m : seen) {
    const auto* f = rte_pktmbuf_mtod(m, const uint8_t*);
    wire::FrameHeader h;
    std::memcpy(&h, f + kLink, sizeof h);
    if (h.type == static_cast<uint8_t>(wire::FrameType::Hello) && h.src == 1 && (h.flags & wire::kFlagSealed))
      hello = m;
  }
  ASSERT_NE(hello, nullptr) << "rank 1's sealed hellos reach every port";
  // Sent again from the attacker's address, before rank 0 starts.
  rte_mbuf* again = rte_pktmbuf_alloc(pool_);
  ASSERT_NE(again, nullptr);
  auto* f = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(again, static_cast<uint16_t>(hello->pkt_len)));
  ASSERT_NE(f, nullptr);
  std::memcpy(f, rte_pktmbuf_mtod(hello, const uint8_t*), hello->pkt_len);
  std::memcpy(f + 6, fabric_->port(2).address().bytes, 6);
  free_all(seen);
  rte_mbuf* one[1] = {again};
  ASSERT_EQ(fabric_->port(2).tx_burst(0, one, 1), 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));  // at rank 0's port, first in its queue

  // Both members start (rank 1 in a new life).
  Outcome zero, first;
  discover_both(zero, first);
  ASSERT_TRUE(zero.table) << zero.error;
  ASSERT_TRUE(first.table) << first.error;
  EXPECT_EQ(zero.table->members[1].lanes[0], fabric_->port(1).address()) << "rank 1's own address";
  EXPECT_EQ(zero.table->epoch, first.table->epoch);
  EXPECT_NE(zero.steps.find("hellos refused: 0 unsealed, 1 with a bad tag"), std::string::npos) << zero.steps;
}

// An ack of group `group` from rank `src`, sent by the attacker's port to
// rank 0's: what a peer's first operation puts on the wire. Its bytes, or
// none if it could not be sent.
std::vector<uint8_t> ack_to_rank0(drivers::Fabric& fabric, rte_mempool* pool, uint32_t group, uint32_t src) {
  rte_mbuf* m = rte_pktmbuf_alloc(pool);
  if (m == nullptr) return {};
  auto* at = reinterpret_cast<uint8_t*>(
      rte_pktmbuf_append(m, static_cast<uint16_t>(kLink + sizeof(wire::FrameHeader) + sizeof(wire::AckBody))));
  if (at == nullptr) {
    rte_pktmbuf_free(m);
    return {};
  }
  fabric.port(2).write_link_header(at, fabric.port(0).address());
  wire::AckBody body{};
  body.cum_ack = 77;
  wire::write_ack(at + kLink, {group, 1, src}, body);
  std::vector<uint8_t> bytes(at, at + m->pkt_len);
  rte_mbuf* one[1] = {m};
  if (fabric.port(2).tx_burst(0, one, 1) == 1) return bytes;
  rte_pktmbuf_free(m);
  return {};
}

TEST_F(SealedHellos, APeersFramesThatComeBeforeTheGroupFormedWaitForTheNode) {
  // At rank 0's port before it starts: rank 1's frame, another group's, and
  // one that says it is rank 0's own.
  const std::vector<uint8_t> sent = ack_to_rank0(*fabric_, pool_, spec_.id, 1);
  ASSERT_FALSE(sent.empty());
  ASSERT_FALSE(ack_to_rank0(*fabric_, pool_, spec_.id + 1, 1).empty());
  ASSERT_FALSE(ack_to_rank0(*fabric_, pool_, spec_.id, 0).empty());
  std::this_thread::sleep_for(std::chrono::milliseconds(5));

  Outcome zero, first;
  discover_both(zero, first);
  ASSERT_TRUE(zero.table) << zero.error;
  ASSERT_TRUE(first.table) << first.error;
  ASSERT_EQ(zero.early.size(), 1u) << "rank 1's frame, and only it";
  const rte_mbuf* kept = zero.early[0].frame;
  EXPECT_EQ(zero.early[0].lane, 0);
  ASSERT_EQ(kept->pkt_len, sent.size());
  EXPECT_EQ(std::memcmp(rte_pktmbuf_mtod(kept, const uint8_t*), sent.data(), sent.size()), 0);
  EXPECT_NE(zero.steps.find("1 early frames kept for the node"), std::string::npos) << zero.steps;
  EXPECT_TRUE(first.early.empty());
  for (const Bootstrap::EarlyFrame& f : zero.early) rte_pktmbuf_free(f.frame);
}

}  // namespace
}  // namespace lanecast::engine::bootstrap
