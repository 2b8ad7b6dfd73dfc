// The engine adapts to what a port can do, visibly: a port that cannot
// transmit chained frames gets flat ones (a counted copy), never a chain; a
// port whose switch does not copy multicast frames gets one datagram per
// member; and every multicast a machine asks for is sent - at any message
// size, up to the group's limit - or counted.
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "tests/engine/node_harness.h"
#include "tests/engine/port_decorator.h"

namespace lanecast::engine {
namespace {

// Takes capabilities away, and counts chained frames handed to a port that
// said it takes none.
class RestrictedPort final : public test::PortDecorator {
 public:
  RestrictedPort(drivers::Port& inner, bool chains, bool multicast)
      : PortDecorator(inner), chains_(chains), multicast_(multicast) {}
  drivers::PortCaps caps() const override {
    drivers::PortCaps c = in_.caps();
    c.tx_chained = chains_;
    c.multicast = multicast_;
    return c;
  }
  uint16_t tx_burst(uint16_t lane, rte_mbuf** frames, uint16_t count) override {
    for (uint16_t i = 0; i < count; ++i)
      if (frames[i]->nb_segs > 1 || frames[i]->next != nullptr) ++chained_given;
    return in_.tx_burst(lane, frames, count);
  }
  uint64_t chained_given = 0;

 private:
  bool chains_, multicast_;
};

struct Outcome {
  std::vector<RestrictedPort*> ports;
  std::unique_ptr<test::NodeHarness> h;
  bool ok = false;
};

Outcome run(algos::Algo algo, uint32_t nodes, uint64_t size, bool chains, bool multicast) {
  Outcome out;
  test::NodeHarness::Options o;
  o.nodes = nodes;
  o.node.segment_bytes = 1000;
  o.node.max_message_bytes = size;
  o.payload_buffers = 16383;
  out.ports.resize(nodes);
  o.wrap = [&out, chains, multicast](uint32_t r, drivers::Port& inner) {
    auto p = std::make_unique<RestrictedPort>(inner, chains, multicast);
    out.ports[r] = p.get();
    return std::unique_ptr<drivers::Port>(std::move(p));
  };
  out.h = std::make_unique<test::NodeHarness>(o);
  std::vector<std::vector<std::byte>> bufs(nodes, std::vector<std::byte>(size));
  std::mt19937_64 rng(11);
  for (auto& b : bufs[0]) b = static_cast<std::byte>(rng());
  const auto recs = out.h->broadcast(0, algo, bufs, 100'000);
  out.ok = test::all_equal(bufs, 0);
  for (const auto& r : recs) out.ok = out.ok && r.op == 1 && r.error == OpError::None;
  return out;
}

// A port whose transmit ring takes at most one frame per burst (a NIC ring
// kept full by other traffic): the node's transmit lanes (tx_lanes.h) keep
// what the port left, sealed or not, and send it first next time - every
// byte still arrives, once, and the frames left behind are counted.
class StingyPort final : public test::PortDecorator {
 public:
  explicit StingyPort(drivers::Port& inner) : PortDecorator(inner) {}
  uint16_t tx_burst(uint16_t lane, rte_mbuf** frames, uint16_t count) override {
    return in_.tx_burst(lane, frames, count > 0 ? 1 : 0);
  }
};

TEST(Ports, FramesAFullPortLeftGoNextTimeNothingLostNothingTwice) {
  for (algos::Algo algo : {algos::Algo::Chain, algos::Algo::Binomial}) {
    test::NodeHarness::Options o;
    o.nodes = 4;
    o.node.segment_bytes = 1000;
    o.node.max_message_bytes = 256 << 10;
    o.payload_buffers = 16383;
    o.wrap = [](uint32_t, drivers::Port& inner) { return std::unique_ptr<drivers::Port>(new StingyPort(inner)); };
    test::NodeHarness h(o);
    std::vector<std::vector<std::byte>> bufs(4, std::vector<std::byte>(256 << 10));
    std::mt19937_64 rng(5);
    for (auto& b : bufs[0]) b = static_cast<std::byte>(rng());
    const auto recs = h.broadcast(0, algo, bufs, 1'000'000);
    ASSERT_TRUE(test::all_equal(bufs, 0));
    for (const auto& r : recs) EXPECT_EQ(r.error, OpError::None);
    uint64_t left = 0, delivered = 0;
    for (uint32_t n = 0; n < 4; ++n) {
      left += h.node(n).counters().tx_lanes.ring_full.get();
      if (n != 0) delivered += h.node(n).counters().delivered_bytes.get();
    }
    EXPECT_GT(left, 0u) << "the port never refused a frame: the test tests nothing";
    EXPECT_EQ(delivered, 3u * (256 << 10)) << "delivered once each";
  }
}

// A node writes its frames' headers into its header pool's buffers after
// their headroom, without an append's checks (FrameBuilder::alloc_frames):
// a pool too small for them - less room than the headroom itself, or than a
// link header and a data header after it - is refused when the node is made.
TEST(Ports, HeaderBuffersTooSmallForTheHeadersAreRefused) {
  for (const uint16_t room : {uint16_t{64}, uint16_t{RTE_PKTMBUF_HEADROOM}, uint16_t{RTE_PKTMBUF_HEADROOM + 80}}) {
    test::NodeHarness::Options o;
    o.nodes = 2;
    o.header_data_room = room;
    EXPECT_THROW(test::NodeHarness{o}, std::invalid_argument) << room << "-byte header buffers";
  }
  test::NodeHarness::Options o;
  o.nodes = 2;
  o.header_data_room = RTE_PKTMBUF_HEADROOM + 14 + wire::kDataHeaderBytes;  // just enough
  EXPECT_NO_THROW(test::NodeHarness{o});
}

TEST(Ports, APortWithoutChainsIsNeverGivenAChain) {
  Outcome r = run(algos::Algo::Chain, 4, 64 << 10, /*chains=*/false, /*multicast=*/true);
  ASSERT_TRUE(r.ok);
  for (uint32_t n = 0; n < 4; ++n) {
    EXPECT_EQ(r.ports[n]->chained_given, 0u) << "rank " << n;
    if (n < 3) {
      EXPECT_GT(r.h->node(n).counters().tx_flatten_bytes.get(), 0u) << "rank " << n << ": the copy is counted";
    }
  }
}

TEST(Ports, APortWithChainsForwardsWithoutFlattening) {
  Outcome r = run(algos::Algo::Chain, 4, 64 << 10, /*chains=*/true, /*multicast=*/true);
  ASSERT_TRUE(r.ok);
  EXPECT_GT(r.ports[1]->chained_given, 0u);
  for (uint32_t n = 0; n < 4; ++n) EXPECT_EQ(r.h->node(n).counters().tx_flatten_bytes.get(), 0u);
}

// At the group's message limit, every multicast goes out: one frame per
// segment where the switch copies, one per member and segment otherwise.
// (Emulated copies once shared the reliable send queue and were dropped,
// uncounted, near the limit: a 1 MiB mcast_chain with a 1 MiB limit sent no
// multicast at all.)
TEST(Ports, EveryMulticastIsSentAtTheMessageLimit) {
  const uint64_t size = 1 << 20;
  const uint64_t segments = (size + 999) / 1000;
  for (bool multicast : {true, false}) {
    SCOPED_TRACE(multicast ? "the switch multicasts" : "multicast emulated");
    Outcome r = run(algos::Algo::McastChain, 6, size, /*chains=*/true, multicast);
    for (uint32_t n = 0; n < 6 && !r.ok; ++n) {
      std::string line = "rank " + std::to_string(n);
      r.h->node(n).counters().for_each([&](std::string_view k, uint64_t v) {
        if (v) line += " " + std::string(k) + "=" + std::to_string(v);
      });
      ADD_FAILURE() << line;
    }
    ASSERT_TRUE(r.ok);
    const auto& root = r.h->node(0).counters();
    EXPECT_EQ(root.tx_datagrams.get(), multicast ? segments : segments * 5);
    // The fallback is visible: a reason and a count of emulated multicasts.
    EXPECT_EQ(root.tx_mcast_emulated.get(), multicast ? 0u : segments);
    EXPECT_EQ(r.h->node(0).multicast_fallback().empty(), multicast) << r.h->node(0).multicast_fallback();
    uint64_t used = 0;
    for (uint32_t n = 0; n < 6; ++n) {
      EXPECT_EQ(r.h->node(n).counters().tx_datagrams_dropped.get(), 0u);
      used += r.h->node(n).counters().rx_datagrams.get();
    }
    // No loss on this fabric: every copy arrived and was taken.
    EXPECT_EQ(used, segments * 5);
    if (multicast) {
      EXPECT_EQ(r.h->fabric().counters().replicated, segments * 4);
    }
  }
}

}  // namespace
}  // namespace lanecast::engine
