// Hellos on the in-process fabric: members find each other by discovery
// while a third port - an attacker's - sends hellos it captured earlier.
//
// Sent again from its own address: a hello is what a member learns a
// peer's address from, so with a key its tag covers the link header: the
// hello does not open (counted), and the group forms with the members' real
// addresses. (When the tag did not cover it, rank 1, in its new life, gave
// up - "another member at <the attacker's address> was started as rank 1
// too" - and rank 0 waited for it until its time-out.)
//
// Sent again unchanged (no key needed to do that), with a key and without:
// a hello of a restarted member's earlier life ended its bootstrap ("was
// started as rank 1 too"), and hellos of a formation that is gone formed a
// group of lives that are gone - a member alone started with its peer's
// earlier life and an epoch nobody else had. Neither happens now.
//
// And what discovery does with the other frames it reads: a member that was
// done first begins the first operation while its peers still look for the
// group. Those frames of the formation wait for the member's node; frames
// forged or of no formation yet do not.
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
#include "engine/auth/epoch_keys.h"
#include "engine/auth/frame_auth.h"
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

  Endpoint endpoint(uint32_t rank, uint64_t incarnation = 0) {
    return Endpoint{rank, {fabric_->port(rank).address()}, incarnation != 0 ? incarnation : fresh_incarnation()};
  }
  // One member's discovery, as a joining process runs it: its table, or
  // what it said when it gave up (`error`); what it refused (`steps`).
  struct Outcome {
    std::optional<EndpointTable> table;
    std::string error, steps;
    std::vector<Bootstrap::EarlyFrame> early;  // the caller frees them
  };
  Outcome discover(uint32_t rank, double timeout_ms, uint64_t incarnation = 0) {
    GroupSpec s = spec_;
    s.bootstrap_timeout_ms = timeout_ms;
    auto boot = make_wire_discovery(s, fabric_->port(rank), pool_);
    Outcome o;
    try {
      o.table = boot->exchange(endpoint(rank, incarnation));
    } catch (const std::runtime_error& e) {
      o.error = e.what();
    }
    o.steps = boot->steps();
    o.early = boot->take_early_frames();
    return o;
  }
  // Ranks 0 and 1 at once, rank 1 on a thread of its own (after
  // `first_after`).
  void discover_both(Outcome& zero, Outcome& first, uint64_t zero_life = 0, uint64_t first_life = 0,
                     std::chrono::milliseconds first_after = {}) {
    std::thread t([&] {
      std::this_thread::sleep_for(first_after);
      first = discover(1, 3000, first_life);
    });
    zero = discover(0, 3000, zero_life);
    t.join();
  }
  // The attacker: sends `frames` again, unchanged and in turn, every
  // millisecond until the returned guard goes.
  struct Replayer {
    std::atomic<bool> stop{false};
    std::thread t;
    ~Replayer() {
      stop.store(true);
      t.join();
    }
  };
  std::unique_ptr<Replayer> replay(std::vector<std::vector<uint8_t>> frames) {
    auto r = std::make_unique<Replayer>();
    r->t = std::thread([this, frames = std::move(frames), stop = &r->stop] {
      for (size_t i = 0; !stop->load() && !frames.empty(); ++i) {
        send_raw(frames[i % frames.size()]);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    });
    return r;
  }
  void send_raw(const std::vector<uint8_t>& bytes) {
    rte_mbuf* m = rte_pktmbuf_alloc(pool_);
    if (m == nullptr) return;
    auto* f = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, static_cast<uint16_t>(bytes.size())));
    if (f == nullptr) {
      rte_pktmbuf_free(m);
      return;
    }
    std::memcpy(f, bytes.data(), bytes.size());
    rte_mbuf* one[1] = {m};
    if (fabric_->port(2).tx_burst(0, one, 1) != 1) rte_pktmbuf_free(m);
  }
  // The hellos of `rank` the attacker's port has seen, as captured.
  std::vector<std::vector<uint8_t>> captured_hellos(uint32_t rank) {
    std::vector<rte_mbuf*> seen = take_all(2);
    std::vector<std::vector<uint8_t>> out;
    for (rte_mbuf* m : seen) {
      const auto* f = rte_pktmbuf_mtod(m, const uint8_t*);
      wire::FrameHeader h;
      std::memcpy(&h, f + kLink, sizeof h);
      if (h.type == static_cast<uint8_t>(wire::FrameType::Hello) && h.src == rank) out.emplace_back(f, f + m->pkt_len);
    }
    free_all(seen);
    return out;
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

TEST_F(SealedHellos, AnEarlierLifesHelloSentAgainUnchangedEndsNoBootstrap) {
  for (const bool keyed : {true, false}) {
    SCOPED_TRACE(keyed ? "with a key" : "without a key");
    spec_.key = keyed ? AuthKey::from_hex(std::string(64, '7'), "test") : nullptr;
    const Outcome alone = discover(1, 40);
    ASSERT_FALSE(alone.table);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::vector<rte_mbuf*> missed = take_all(0);
    free_all(missed);
    std::vector<std::vector<uint8_t>> hellos = captured_hellos(1);
    ASSERT_GE(hellos.size(), 2u) << "rank 1's hellos reach every port";
    missed = take_all(1);
    free_all(missed);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // this life starts after that one's hellos
    const uint64_t zero_life = 0x5eed0000, first_life = 0x5eed0001;
    Outcome zero, first;
    {
      auto attacker = replay(std::move(hellos));
      std::this_thread::sleep_for(std::chrono::milliseconds(3));  // at both ports first
      discover_both(zero, first, zero_life, first_life);
    }
    ASSERT_TRUE(first.table) << first.error;
    ASSERT_TRUE(zero.table) << zero.error;
    EXPECT_EQ(zero.table->members[1].incarnation, first_life) << "rank 1's present life";
    EXPECT_EQ(zero.table->members[1].lanes[0], fabric_->port(1).address());
    EXPECT_EQ(zero.table->epoch, first.table->epoch);
    EXPECT_NE(first.steps.find("hellos from before this member started set aside"), std::string::npos) << first.steps;
    for (const Outcome* o : {&zero, &first})
      for (const Bootstrap::EarlyFrame& f : o->early) rte_pktmbuf_free(f.frame);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    for (uint32_t port = 0; port < 3; ++port) {
      std::vector<rte_mbuf*> left = take_all(port);
      free_all(left);
    }
  }
}

// Both ranks formed a group once; then rank 0 starts again alone, rank 1
// later, while the attacker sends rank 1's hellos of the first formation
// again - saying it heard everyone. Rank 0 must not form with that life
// that is gone (before, it did: alone, with an epoch rank 1 never had), but
// with rank 1's present one.
TEST_F(SealedHellos, HellosOfAFormationThatIsGoneFormNothing) {
  for (const bool keyed : {true, false}) {
    SCOPED_TRACE(keyed ? "with a key" : "without a key");
    spec_.key = keyed ? AuthKey::from_hex(std::string(64, '7'), "test") : nullptr;
    Outcome zero, first;
    discover_both(zero, first);
    ASSERT_TRUE(zero.table && first.table) << zero.error << first.error;
    for (const Outcome* o : {&zero, &first})
      for (const Bootstrap::EarlyFrame& f : o->early) rte_pktmbuf_free(f.frame);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::vector<std::vector<uint8_t>> hellos = captured_hellos(1);
    ASSERT_FALSE(hellos.empty());
    for (uint32_t port = 0; port < 2; ++port) {
      std::vector<rte_mbuf*> left = take_all(port);
      free_all(left);
    }
    const uint64_t zero_life = 0xa11ce000, first_life = 0xa11ce001;
    Outcome again_zero, again_first;
    {
      auto attacker = replay(std::move(hellos));
      discover_both(again_zero, again_first, zero_life, first_life, std::chrono::milliseconds(150));
    }
    ASSERT_TRUE(again_zero.table) << again_zero.error;
    ASSERT_TRUE(again_first.table) << again_first.error;
    EXPECT_EQ(again_zero.table->members[1].incarnation, first_life) << "rank 0 formed with a life that is gone";
    EXPECT_EQ(again_zero.table->epoch, again_first.table->epoch);
    for (const Outcome* o : {&again_zero, &again_first})
      for (const Bootstrap::EarlyFrame& f : o->early) rte_pktmbuf_free(f.frame);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    for (uint32_t port = 0; port < 3; ++port) {
      std::vector<rte_mbuf*> left = take_all(port);
      free_all(left);
    }
  }
}

// An ack of group `group` from rank `src` to rank 0, from rank 1's address,
// with `cum_ack` to tell it apart: what a peer's first operation puts on
// the wire. Sealed by `sealer` (a member of the formation) when given.
std::vector<uint8_t> ack_to_rank0(drivers::Fabric& fabric, uint32_t group, uint32_t epoch, uint32_t src,
                                  uint32_t cum_ack, auth::FrameAuth* sealer) {
  const uint16_t seal_at = wire::frame_seal_at(wire::FrameType::Ack);
  std::vector<uint8_t> f(kLink + seal_at + (sealer ? wire::kSealBytes : 0));
  fabric.port(1).write_link_header(f.data(), fabric.port(0).address());
  wire::AckBody body{};
  body.cum_ack = cum_ack;
  wire::write_ack(f.data() + kLink, {group, epoch, src}, body, sealer ? wire::kFlagSealed : 0);
  if (sealer) sealer->seal_frame(f.data(), kLink, seal_at);
  return f;
}

uint32_t cum_ack_of(const rte_mbuf* m) {
  wire::AckBody b;
  std::memcpy(&b, rte_pktmbuf_mtod(m, const uint8_t*) + kLink + sizeof(wire::FrameHeader), sizeof b);
  return b.cum_ack;
}

// While rank 0 looks for its group, frames come to its port: rank 1's
// first operation, sealed under the formation's keys (cum_ack 1000 on), and
// the attacker's - unsealed, sealed under a key of its own, of another
// group, in rank 0's own name (cum_ack 77). Only rank 1's wait for the node
// (before, every one of the group's did, forged or not).
TEST_F(SealedHellos, OnlyAFormationsFramesThatComeBeforeItFormedWaitForTheNode) {
  const uint64_t zero_life = 0xfeed0000, first_life = 0xfeed0001;
  std::vector<Endpoint> lives{endpoint(0, zero_life), endpoint(1, first_life)};
  const uint32_t epoch = epoch_of(spec_.id, lives);
  const uint64_t incarnations[2] = {zero_life, first_life};
  const auth::EpochKeys keys = auth::derive_formation_keys(*spec_.key, spec_.id, epoch, incarnations);
  const auth::EpochKeys wrong = auth::derive_formation_keys(*AuthKey::from_hex(std::string(64, '6'), "wrong"), spec_.id,
                                                            epoch, incarnations);
  auth::FrameAuth rank1(keys, 1, 2), forger(wrong, 1, 2);
  std::atomic<bool> stop{false};
  std::thread attacker([&] {
    for (uint32_t i = 0; !stop.load() && i < 20'000; ++i) {
      send_raw(ack_to_rank0(*fabric_, spec_.id, epoch, 1, 1000 + i, &rank1));
      send_raw(ack_to_rank0(*fabric_, spec_.id, epoch, 1, 77, nullptr));
      send_raw(ack_to_rank0(*fabric_, spec_.id, epoch, 1, 77, &forger));
      send_raw(ack_to_rank0(*fabric_, spec_.id + 1, epoch, 1, 77, &rank1));
      send_raw(ack_to_rank0(*fabric_, spec_.id, epoch, 0, 77, &rank1));
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  Outcome zero, first;
  discover_both(zero, first, zero_life, first_life, std::chrono::milliseconds(20));
  stop.store(true);
  attacker.join();
  ASSERT_TRUE(zero.table) << zero.error;
  ASSERT_TRUE(first.table) << first.error;
  ASSERT_EQ(zero.table->epoch, epoch);
  EXPECT_FALSE(zero.early.empty()) << "rank 1's frames sent once rank 0 knew the formation";
  for (const Bootstrap::EarlyFrame& f : zero.early) {
    EXPECT_GE(cum_ack_of(f.frame), 1000u) << "a forged frame waits for the node";
    EXPECT_EQ(f.lane, 0);
  }
  EXPECT_NE(zero.steps.find("early frames kept for the node"), std::string::npos) << zero.steps;
  EXPECT_NE(zero.steps.find("refused (not of the formation)"), std::string::npos) << zero.steps;
  for (const Outcome* o : {&zero, &first})
    for (const Bootstrap::EarlyFrame& f : o->early) rte_pktmbuf_free(f.frame);
}

}  // namespace
}  // namespace lanecast::engine::bootstrap
