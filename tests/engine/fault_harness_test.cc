// Nodes under faults in virtual time (tests/engine/node_harness.h): the
// engine's whole protocol with a FaultPort on every member's port, driven by
// hand, so a run is deterministic and replays exactly. Every broadcast
// completes with every byte, and the buffers all come back: nothing the
// protocol or the fault ports hold is lost along the way.
#include <gtest/gtest.h>
#include <rte_mempool.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "drivers/ethernet.h"
#include "drivers/fault/fault_port.h"
#include "engine/wire/wire.h"
#include "tests/engine/node_harness.h"

namespace lanecast::engine {
namespace {

const test::NodeHarness* g_harness = nullptr;
uint64_t harness_clock() { return g_harness == nullptr ? 0 : g_harness->now(); }

drivers::FaultProfile soak_mix() {
  drivers::FaultProfile f;
  f.loss = 0.05;
  f.reorder = 0.02;
  f.duplicate = 0.01;
  f.corrupt = 0.005;
  return f;
}

// Buffers taken from a pool now.
uint32_t in_use(rte_mempool* p) { return p->size - rte_mempool_avail_count(p); }

// A group of `nodes` with the same faults on every member's receive side.
class FaultyGroup {
 public:
  FaultyGroup(uint32_t nodes, const drivers::FaultProfile& f, uint64_t seed) {
    lanecast::test::start_eal();
    static int n = 0;
    const std::string tag = "fh" + std::to_string(n++);
    clones_ = rte_pktmbuf_pool_create((tag + "c").c_str(), 8191, 0, 0, RTE_PKTMBUF_HEADROOM + 128, SOCKET_ID_ANY);
    copies_ = rte_pktmbuf_pool_create((tag + "k").c_str(), 1023, 0, 0, RTE_PKTMBUF_HEADROOM + 2048, SOCKET_ID_ANY);
    test::NodeHarness::Options o;
    o.nodes = nodes;
    o.node.segment_bytes = 1400;
    o.node.max_message_bytes = 256 << 10;
    o.header_buffers = 32767;
    o.wrap = [=, this](uint32_t rank, drivers::Port& inner) -> std::unique_ptr<drivers::Port> {
      drivers::FaultPortOptions fo;
      drivers::FaultRule r;
      r.faults = f;
      fo.rules = {r};
      for (uint32_t k = 0; k < nodes; ++k)
        if (k != rank) fo.links.push_back(drivers::ethernet::node_mac(k, 0));  // the fabric's addresses
      fo.seed = seed * 131 + rank;
      fo.header_bytes = wire::kDataHeaderBytes;
      fo.clone_pool = clones_;
      fo.copy_pool = copies_;
      fo.clock = &harness_clock;
      return std::make_unique<drivers::FaultPort>(inner, fo);
    };
    h_ = std::make_unique<test::NodeHarness>(o);
    g_harness = h_.get();
  }
  ~FaultyGroup() {
    h_.reset();
    g_harness = nullptr;
    rte_mempool_free(clones_);
    rte_mempool_free(copies_);
  }
  test::NodeHarness& h() { return *h_; }
  // Buffers out of every pool the group uses.
  uint64_t buffers_out() const {
    uint64_t n = in_use(h_->header_pool()) + in_use(h_->payload_pool(0)) + in_use(clones_) + in_use(copies_);
    return n;
  }

 private:
  rte_mempool* clones_ = nullptr;
  rte_mempool* copies_ = nullptr;
  std::unique_ptr<test::NodeHarness> h_;
};

TEST(FaultsInVirtualTime, EveryAlgorithmCompletesAndNoBufferIsLost) {
  FaultyGroup g(8, soak_mix(), 3);
  auto& h = g.h();
  std::mt19937_64 rng(5);
  const algos::Algo algos[] = {algos::Algo::Symmetric, algos::Algo::Chain, algos::Algo::Linear,
                               algos::Algo::Bintree, algos::Algo::Binomial, algos::Algo::McastChain};
  uint64_t out_after_warmup = 0;
  for (uint32_t i = 0; i < 600; ++i) {
    const algos::Algo a = algos[i % std::size(algos)];
    const uint64_t size = i % 3 == 0 ? 1 + rng() % 200 : 1 + rng() % (64 << 10);
    const algos::Rank root = static_cast<algos::Rank>(rng() % 8);
    std::vector<std::vector<std::byte>> bufs(8, std::vector<std::byte>(size));
    for (auto& b : bufs[root]) b = static_cast<std::byte>(rng());
    const auto recs = h.broadcast(root, a, bufs, 2'000'000, 1000);
    for (uint32_t r = 0; r < 8; ++r)
      ASSERT_EQ(recs[r].error, OpError::None) << "broadcast " << i << " rank " << r << " op " << recs[r].op;
    ASSERT_TRUE(test::all_equal(bufs, root)) << "broadcast " << i;
    if (i == 99) {
      h.run(10'000, 1000);  // 10 ms: acks and late copies settle
      out_after_warmup = g.buffers_out();
    }
  }
  h.run(10'000, 1000);
  EXPECT_LE(g.buffers_out(), out_after_warmup + 64) << "buffers lost over 500 broadcasts";
}

}  // namespace
}  // namespace lanecast::engine
