// Discovery under a flood, on the in-process fabric: a member's port that
// never runs dry - the attacker's frames fill every burst it reads. Before,
// the receive loop read until the port was empty and only then looked at
// its deadline, so a flood kept a bootstrap from ever timing out; and the
// frames of the group it kept for its node (512 of them) went to whoever
// sent first, forged or not.
#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <future>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "drivers/fabric/fabric.h"
#include "drivers/forwarding_port.h"
#include "engine/auth/epoch_keys.h"
#include "engine/auth/frame_auth.h"
#include "engine/bootstrap/wire_discovery.h"
#include "engine/wire/wire.h"
#include "tests/engine/eal_env.h"

namespace lanecast::engine::bootstrap {
namespace {

constexpr uint16_t kLink = 14;
using Bytes = std::vector<uint8_t>;

uint64_t steady_ns() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

// The attacker's flood as the member's port delivers it: what really came
// first, then frames of `junk` up to the burst's end, every time - until
// `stop` (so that a discovery that never looks up can still be ended).
class FloodPort final : public drivers::ForwardingPort {
 public:
  FloodPort(drivers::Port& inner, rte_mempool* pool, std::function<Bytes(uint64_t)> junk)
      : ForwardingPort(inner), pool_(pool), junk_(std::move(junk)) {}
  uint16_t rx_burst(uint16_t lane, rte_mbuf** frames, uint16_t max) override {
    uint16_t got = in_.rx_burst(lane, frames, max);
    while (got < max && !stop.load(std::memory_order_relaxed)) {
      const Bytes b = junk_(sent_++);
      rte_mbuf* m = rte_pktmbuf_alloc(pool_);
      if (m == nullptr) break;
      auto* at = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, static_cast<uint16_t>(b.size())));
      if (at == nullptr) {
        rte_pktmbuf_free(m);
        break;
      }
      std::memcpy(at, b.data(), b.size());
      frames[got++] = m;
    }
    return got;
  }
  std::atomic<bool> stop{false};
  uint64_t sent() const { return sent_; }

 private:
  rte_mempool* pool_;
  std::function<Bytes(uint64_t)> junk_;
  uint64_t sent_ = 0;
};

class DiscoveryFlood : public ::testing::Test {
 protected:
  void SetUp() override {
    lanecast::test::start_eal();
    pool_ = lanecast::test::test_pool("discovery_flood");
    ASSERT_NE(pool_, nullptr);
    drivers::Fabric::Options fo;
    fo.nodes = 2;
    fo.pool = pool_;
    fabric_ = std::make_unique<drivers::Fabric>(fo);
    spec_.name = "flood";
    spec_.id = 11;
    spec_.bootstrap = "discovery";
    for (uint32_t r = 0; r < 2; ++r) spec_.members.push_back(MemberSpec{r, {"fabric"}, {}});
    wires_ = std::thread([this] {
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

  // A frame of `group` from `src` to rank 0, written by rank 1's port (its
  // source address), with `cum_ack` to tell it apart; sealed when given.
  Bytes ack(uint32_t group, uint32_t epoch, uint32_t src, uint32_t cum_ack, auth::FrameAuth* sealer) {
    const uint16_t seal_at = wire::frame_seal_at(wire::FrameType::Ack);
    Bytes f(kLink + seal_at + (sealer ? wire::kSealBytes : 0));
    fabric_->port(1).write_link_header(f.data(), fabric_->port(0).address());
    wire::AckBody body{};
    body.cum_ack = cum_ack;
    wire::write_ack(f.data() + kLink, {group, epoch, src}, body, sealer ? wire::kFlagSealed : 0);
    if (sealer) sealer->seal_frame(f.data(), kLink, seal_at);
    return f;
  }
  // A hello of the group in rank 1's name, with no seal.
  Bytes hello() {
    Bytes f(kLink + wire::kHelloBytes);
    fabric_->port(1).write_link_header(f.data(), fabric_->port(0).address());
    wire::HelloBody h{};
    h.incarnation = 42;
    h.spec_digest = spec_digest(spec_);
    h.nodes = 2;
    h.lanes = 1;
    wire::write_hello(f.data() + kLink, {spec_.id, 0, 1}, h);
    return f;
  }

  // Rank `rank`'s discovery on `port`, on a thread; its table or error.
  // A discovery still running after `bound` (far beyond its deadline) is
  // ended by stopping the flood, and reported.
  struct Outcome {
    std::optional<EndpointTable> table;
    std::string error, steps;
    std::vector<Bootstrap::EarlyFrame> early;
    bool overran = false;
  };
  Outcome discover(uint32_t rank, drivers::Port& port, uint64_t life, double timeout_ms, FloodPort* flood,
                   std::chrono::seconds bound) {
    GroupSpec s = spec_;
    s.bootstrap_timeout_ms = timeout_ms;
    auto boot = make_wire_discovery(s, port, pool_);
    Outcome o;
    auto run = std::async(std::launch::async, [&] {
      try {
        o.table = boot->exchange(Endpoint{rank, {fabric_->port(rank).address()}, life});
      } catch (const std::runtime_error& e) {
        o.error = e.what();
      }
    });
    if (run.wait_for(bound) != std::future_status::ready) {
      o.overran = true;
      if (flood) flood->stop.store(true);
    }
    run.wait();
    o.steps = boot->steps();
    o.early = boot->take_early_frames();
    return o;
  }

  rte_mempool* pool_ = nullptr;
  std::unique_ptr<drivers::Fabric> fabric_;
  GroupSpec spec_;
  std::atomic<bool> stop_{false};
  std::thread wires_;
};

// Rank 1 never starts; rank 0's port never runs dry of frames of another
// group, forged hellos and forged frames of its own group. Rank 0 still
// gives up at its deadline, saying why.
TEST_F(DiscoveryFlood, ABootstrapUnderAFloodStillEndsAtItsDeadline) {
  for (const bool keyed : {false, true}) {
    SCOPED_TRACE(keyed ? "with a key" : "without a key");
    spec_.key = keyed ? AuthKey::from_hex(std::string(64, '3'), "test") : nullptr;
    FloodPort flood(fabric_->port(0), pool_, [&](uint64_t i) {
      switch (i % 3) {
        case 0: return ack(spec_.id + 1, 5, 1, 1, nullptr);
        case 1: return hello();
        default: return ack(spec_.id, 5, 1, 1, nullptr);
      }
    });
    const auto t0 = std::chrono::steady_clock::now();
    Outcome zero = discover(0, flood, 0x1, 300, &flood, std::chrono::seconds(30));
    const auto waited = std::chrono::steady_clock::now() - t0;
    EXPECT_FALSE(zero.overran) << "still looking 30 s after a 300 ms deadline (" << flood.sent() << " frames read)";
    ASSERT_FALSE(zero.table);
    EXPECT_NE(zero.error.find("gave up finding its group after"), std::string::npos) << zero.error;
    // Without a key the forged hellos are rank 1's for all rank 0 can tell.
    EXPECT_NE(zero.error.find(keyed ? "never heard rank(s) 1" : "rank(s) 1 did not hear everyone"), std::string::npos)
        << zero.error;
    EXPECT_GE(waited, std::chrono::milliseconds(300));
    EXPECT_GT(flood.sent(), 0u);
    if (keyed) {
      EXPECT_NE(zero.error.find("hellos without a seal"), std::string::npos) << zero.error;
    }
    EXPECT_TRUE(zero.early.empty());
    for (const Bootstrap::EarlyFrame& f : zero.early) rte_pktmbuf_free(f.frame);
  }
}

// With a key: rank 0's port never runs dry of frames forged in rank 1's
// name for the formation about to be (its epoch: a forger reads it off the
// wire) - unsealed and sealed under a key of the attacker's own - among
// which come rank 1's genuine ones. The slots for early frames go to the
// genuine ones only.
TEST_F(DiscoveryFlood, ForgedEarlyFramesTakeNoSlotFromGenuineOnes) {
  spec_.key = AuthKey::from_hex(std::string(64, '3'), "test");
  const uint64_t zero_life = 0xc0de0000, first_life = 0xc0de0001;
  const std::vector<Endpoint> lives{Endpoint{0, {}, zero_life}, Endpoint{1, {}, first_life}};
  const uint32_t epoch = epoch_of(spec_.id, lives);
  const uint64_t incarnations[2] = {zero_life, first_life};
  const auth::EpochKeys keys = auth::derive_formation_keys(*spec_.key, spec_.id, epoch, incarnations);
  const auth::EpochKeys wrong = auth::derive_formation_keys(*AuthKey::from_hex(std::string(64, '6'), "wrong"),
                                                            spec_.id, epoch, incarnations);
  auth::FrameAuth rank1(keys, 1, 2), forger(wrong, 1, 2);
  uint32_t genuine = 0;
  FloodPort flood(fabric_->port(0), pool_, [&](uint64_t i) {
    if (i % 64 == 0) return ack(spec_.id, epoch, 1, 1000 + genuine++, &rank1);
    return ack(spec_.id, epoch, 1, 77, i % 2 ? &forger : nullptr);
  });
  Outcome first;
  std::thread t([&] { first = discover(1, fabric_->port(1), first_life, 20'000, nullptr, std::chrono::seconds(60)); });
  Outcome zero = discover(0, flood, zero_life, 20'000, &flood, std::chrono::seconds(60));
  t.join();
  ASSERT_FALSE(zero.overran);
  ASSERT_TRUE(zero.table) << zero.error;
  ASSERT_TRUE(first.table) << first.error;
  ASSERT_EQ(zero.table->epoch, epoch);
  EXPECT_GT(flood.sent(), bootstrap::kEarlyFramesKept) << "more forgeries than slots";
  ASSERT_FALSE(zero.early.empty());
  uint32_t forged_kept = 0;
  for (const Bootstrap::EarlyFrame& f : zero.early) {
    wire::AckBody b;
    std::memcpy(&b, rte_pktmbuf_mtod(f.frame, const uint8_t*) + kLink + sizeof(wire::FrameHeader), sizeof b);
    if (b.cum_ack < 1000) ++forged_kept;
    rte_pktmbuf_free(f.frame);
  }
  EXPECT_EQ(forged_kept, 0u) << "of " << zero.early.size() << " kept; " << zero.steps;
  for (const Bootstrap::EarlyFrame& f : first.early) rte_pktmbuf_free(f.frame);
}

}  // namespace
}  // namespace lanecast::engine::bootstrap
