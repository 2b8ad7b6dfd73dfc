// Groups with a key through the public API, on polling cores: every
// algorithm (multicast too) under 5% loss on every link and a stream beside,
// every byte equal to the root's - so seals, counters and windows never
// refuse a genuine frame, however frames are lost, resent or reordered
// (forged, replayed and altered frames: sealed_frames_test.cc).
#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <vector>

#include "algos/registry.h"
#include "lanecast/lanecast.h"
#include "engine/api/member_internals.h"
#include "tests/engine/group_env.h"

namespace lanecast {
namespace {

using namespace std::chrono_literals;
using test::engine;

uint64_t refused(const engine::NodeCounters& c) {
  return c.rx_unsealed.get() + c.rx_bad_tag.get() + c.rx_replayed.get() + c.rx_stale_counter.get() +
         c.rx_bad_payload_seal.get();
}

void run_stream(LocalGroup& g) {
  constexpr uint64_t kMessages = 500;
  Publisher p = g.member(5).open_stream(0);
  for (uint64_t s = 0; s < kMessages; ++s) {
    std::vector<std::byte> m(s % 3 == 0 ? 3000 : 64, static_cast<std::byte>(s));
    ASSERT_EQ(p.publish_for(m, 20s), PublishResult::Ok) << p.status().message;
  }
  for (Rank r = 0; r < g.size(); ++r) {
    StreamMessage m;
    uint64_t got = 0;
    while (got < kMessages && g.member(r).next_for(m, 20s)) {
      ASSERT_EQ(m.seq, got) << "rank " << r;
      ASSERT_EQ(m.data.size(), got % 3 == 0 ? 3000u : 64u);
      ASSERT_EQ(m.data[m.data.size() - 1], static_cast<std::byte>(got));
      ++got;
    }
    EXPECT_EQ(got, kMessages) << "rank " << r << ": " << g.member(r).stream_status().message;
  }
}

TEST(KeyedGroup, EveryAlgorithmUnderLossWithAStreamBeside) {
  const uint64_t seed = test::test_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (LANECAST_SEED replays)");
  std::mt19937_64 rng(seed);
  const auto key = AuthKey::generate();
  for (const auto& info : algos::algorithms()) {
    SCOPED_TRACE(std::string(info.name));
    GroupOptions o;
    o.nodes = 8;
    o.algo = std::string(info.name);
    o.segment_bytes = 1024;
    o.max_message_bytes = 1 << 20;
    o.fabric.loss = 0.05;
    o.fabric.seed = seed;
    o.key = key;
    auto g = engine().create_local_group(o);
    ASSERT_TRUE(g->caps().sealed);
    EXPECT_EQ(g->caps().key_fingerprint, key->fingerprint());
    for (uint64_t size : {uint64_t{1}, uint64_t{4000}, uint64_t{1} << 20}) {
      std::vector<std::vector<std::byte>> bufs(8, std::vector<std::byte>(size));
      test::fill(bufs[3], rng);
      ASSERT_EQ(test::broadcast_all(*g, 3, bufs), "") << "size " << size;
      for (Rank r = 0; r < 8; ++r) ASSERT_TRUE(bufs[r] == bufs[3]) << "rank " << r << ", size " << size;
    }
    // A stream of 500 messages from rank 5, each checked on every member, on
    // each shape of stream tree (chain: fanout 1, linear: 7, bintree: 2).
    if (info.name == "chain" || info.name == "linear" || info.name == "bintree") run_stream(*g);
    uint64_t retransmits = 0;
    for (Rank r = 0; r < 8; ++r) {
      const auto& c = node_counters(g->member(r));
      EXPECT_EQ(refused(c), 0u) << "rank " << r << " refused a genuine frame";
      retransmits += c.tx_retransmits.get();
    }
    EXPECT_GT(retransmits, 0u) << "the loss was meant to make the members send again";
  }
}

}  // namespace
}  // namespace lanecast
