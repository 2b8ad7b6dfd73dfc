// A node under fire from the wire: every kind of malformed, foreign or
// out-of-place frame is dropped and counted under its own reason, nothing
// leaks, and the node still completes a real broadcast afterwards.
#include <gtest/gtest.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "drivers/ethernet.h"
#include "drivers/fabric/fabric.h"
#include "engine/crc32c.h"
#include "engine/node.h"
#include "engine/wire.h"
#include "tests/engine/eal_env.h"

namespace lanecast::engine {
namespace {

constexpr uint32_t kSeg = 256;

class HostileFrames : public ::testing::Test {
 protected:
  void SetUp() override {
    test::start_eal();
    payload_ = rte_pktmbuf_pool_create("hf_pay", 4095, 0, 0, RTE_PKTMBUF_HEADROOM + 2048, SOCKET_ID_ANY);
    header_ = rte_pktmbuf_pool_create("hf_hdr", 4095, 0, 0, RTE_PKTMBUF_HEADROOM + 128, SOCKET_ID_ANY);
    ASSERT_NE(payload_, nullptr);
    ASSERT_NE(header_, nullptr);
    drivers::Fabric::Options fo;
    fo.nodes = 3;  // ranks 0 and 1 form the group; port 2 is the attacker
    fo.max_frame_bytes = 2000;
    fo.pool = payload_;
    fabric_ = std::make_unique<drivers::Fabric>(fo);
    NodeConfig nc;
    nc.group_id = 7;
    nc.nodes = 2;
    nc.segment_bytes = kSeg;
    nc.max_message_bytes = 64 * kSeg;
    nc.peer_timeout_ns = 2'000'000'000;
    std::vector<drivers::PeerAddress> addrs{fabric_->address(0), fabric_->address(1)};
    for (uint32_t r = 0; r < 2; ++r) {
      nc.rank = r;
      nodes_.push_back(std::make_unique<Node>(nc, fabric_->port(r), Pools{payload_, header_}, addrs));
    }
    free_payload_ = rte_mempool_avail_count(payload_);
    free_header_ = rte_mempool_avail_count(header_);
  }

  void TearDown() override {
    nodes_.clear();
    fabric_.reset();
    rte_mempool_free(payload_);
    rte_mempool_free(header_);
  }

  // A frame from the attacker's port to rank 1, built by `fill`.
  template <typename F>
  void inject(uint16_t len, F&& fill) {
    rte_mbuf* m = rte_pktmbuf_alloc(payload_);
    ASSERT_NE(m, nullptr);
    auto* p = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, len));
    ASSERT_NE(p, nullptr);
    std::memset(p, 0, len);
    if (len >= drivers::ethernet::kHeaderBytes)
      drivers::ethernet::write_header(p, fabric_->address(1), fabric_->address(2));
    fill(p);
    rte_mbuf* one[1] = {m};
    ASSERT_EQ(fabric_->port(2).tx_burst(0, one, 1), 1);
  }

  // A well-formed data frame (both CRCs right) with the given fields.
  void inject_data(uint32_t group, uint32_t src, uint32_t op, uint32_t seq, uint32_t seg,
                   uint64_t total, uint32_t len, uint32_t seg_bytes = kSeg) {
    const uint16_t frame = static_cast<uint16_t>(14 + wire::kDataHeaderBytes + len);
    inject(frame, [&](uint8_t* p) {
      uint8_t* pay = p + 14 + wire::kDataHeaderBytes;
      std::memset(pay, 0xC3, len);
      wire::DataBody b{};
      b.op = op; b.root = 0; b.seq = seq; b.segment = seg; b.offset = uint64_t{seg} * seg_bytes;
      b.total_len = total; b.payload_len = len; b.payload_crc = crc32c(0, pay, len);
      b.segment_bytes = seg_bytes; b.algo = static_cast<uint8_t>(algos::Algo::Chain);
      wire::write_data(p + 14, group, src, b);
    });
  }

  void run(uint64_t iterations = 200) {
    for (uint64_t i = 0; i < iterations; ++i) {
      now_ += 1000;
      fabric_->poll(now_);
      for (auto& n : nodes_) n->poll(now_);
    }
  }

  bool broadcast(std::vector<std::byte>& src, std::vector<std::byte>& dst, uint32_t op) {
    Submission s;
    s.op = op; s.root = 0; s.algo = algos::Algo::Chain; s.size = src.size();
    s.buffer = src.data();
    nodes_[0]->submit(s);
    s.buffer = dst.data();
    nodes_[1]->submit(s);
    int done = 0;
    CompletionRecord rec;
    for (int i = 0; i < 100000 && done < 2; ++i) {
      run(1);
      for (auto& n : nodes_)
        while (n->take_completion(&rec)) {
          if (rec.error != OpError::None) return false;
          ++done;
        }
    }
    return done == 2;
  }

  rte_mempool* payload_ = nullptr;
  rte_mempool* header_ = nullptr;
  std::unique_ptr<drivers::Fabric> fabric_;
  std::vector<std::unique_ptr<Node>> nodes_;
  unsigned free_payload_ = 0, free_header_ = 0;
  uint64_t now_ = 1'000'000;
};

TEST_F(HostileFrames, EveryBadFrameIsCountedAndTheNodeStillWorks) {
  const auto& c = nodes_[1]->counters();
  // Too short for any header; wrong EtherType; addressed to someone else.
  inject(20, [](uint8_t*) {});
  inject(100, [](uint8_t* p) { p[12] = 0x08; p[13] = 0x00; });
  inject(100, [](uint8_t* p) { const uint8_t nobody[6] = {2, 0, 0, 0, 0, 9}; std::memcpy(p, nobody, 6); });
  // Bad version, bad type, bad header CRC, bad payload CRC, bad length.
  inject_data(7, 0, 1, 0, 0, 4 * kSeg, kSeg);
  inject(14 + wire::kDataHeaderBytes + 10, [](uint8_t* p) { p[14] = 99; });
  inject(14 + wire::kDataHeaderBytes + 10, [](uint8_t* p) { p[14] = wire::kVersion; p[15] = 77; });
  inject_data(7, 0, 1, 1, 1, 4 * kSeg, kSeg);
  run(5);
  inject(14 + wire::kDataHeaderBytes + kSeg, [&](uint8_t* p) {
    wire::DataBody b{}; b.payload_len = kSeg; b.segment_bytes = kSeg; b.total_len = kSeg;
    wire::write_data(p + 14, 7, 0, b);
    p[14 + 20] ^= 1;  // header bit flip
  });
  inject(14 + wire::kDataHeaderBytes + kSeg, [&](uint8_t* p) {
    wire::DataBody b{}; b.payload_len = kSeg; b.segment_bytes = kSeg; b.total_len = kSeg;
    b.payload_crc = 1234;  // payload does not match
    wire::write_data(p + 14, 7, 0, b);
  });
  inject(14 + wire::kDataHeaderBytes + 5, [&](uint8_t* p) {
    wire::DataBody b{}; b.payload_len = 500;  // claims more than the frame holds
    wire::write_data(p + 14, 7, 0, b);
  });
  // Well-formed but foreign: another group, a source outside the group, ourselves.
  inject_data(8, 0, 1, 2, 0, 4 * kSeg, kSeg);
  inject_data(7, 5, 1, 0, 0, 4 * kSeg, kSeg);
  inject_data(7, 1, 1, 0, 0, 4 * kSeg, kSeg);
  // An operation far in the future: dropped, not acked, not kept.
  inject_data(7, 0, 40, 5, 0, 4 * kSeg, kSeg);
  // Random garbage with our EtherType.
  std::mt19937_64 rng(99);
  for (int i = 0; i < 300; ++i) {
    const uint16_t len = static_cast<uint16_t>(14 + rng() % 400);
    inject(len, [&](uint8_t* p) {
      for (uint16_t k = 14; k < len; ++k) p[k] = static_cast<uint8_t>(rng());
      if (len > 15 && rng() % 2) p[14] = wire::kVersion;
    });
  }
  run(50);
  EXPECT_EQ(fabric_->counters().unknown_destination, 1u);  // the switch drops it
  EXPECT_EQ(c.rx_not_for_us.get(), 1u);                    // the foreign EtherType
  EXPECT_GE(c.rx_malformed[static_cast<size_t>(wire::Verdict::TooShort)].get(), 1u);
  EXPECT_GE(c.rx_malformed[static_cast<size_t>(wire::Verdict::BadLength)].get(), 1u);
  EXPECT_GE(c.rx_malformed[static_cast<size_t>(wire::Verdict::BadVersion)].get(), 1u);
  EXPECT_GE(c.rx_malformed[static_cast<size_t>(wire::Verdict::BadType)].get(), 1u);
  EXPECT_GE(c.rx_malformed[static_cast<size_t>(wire::Verdict::BadHeaderCrc)].get(), 1u);
  EXPECT_GE(c.rx_malformed[static_cast<size_t>(wire::Verdict::BadPayloadCrc)].get(), 1u);
  EXPECT_EQ(c.rx_foreign_group.get(), 1u);
  EXPECT_EQ(c.rx_bad_source.get(), 2u);
  EXPECT_EQ(c.rx_early_dropped.get(), 1u);
  EXPECT_EQ(c.delivered_bytes.get(), 0u);
  // Nothing the attacker sent was accepted as data of a real broadcast, except
  // the two well-formed frames of op 1 from rank 0, which wait in the stash.
  EXPECT_EQ(c.rx_stashed.get(), 2u);
  EXPECT_EQ(c.rx_frames.get(), 6u + 3 + 3 + 1 + 300);
  // Every dropped frame went back to its pool: only the two stashed remain out.
  EXPECT_EQ(rte_mempool_avail_count(payload_), free_payload_ - 2);

  // The stashed op-1 frames claim 4 segments from root 0: a real broadcast of
  // a different size must fail clearly on rank 1 instead of taking them.
  std::vector<std::byte> a(3 * kSeg + 5), b(3 * kSeg + 5);
  EXPECT_FALSE(broadcast(a, b, 1));
  // The next broadcast (op 2) is clean and completes with the root's bytes.
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<std::byte>(i * 7);
  ASSERT_TRUE(broadcast(a, b, 2));
  EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size()));
  run(20);
  EXPECT_EQ(rte_mempool_avail_count(header_), free_header_);
}

// A receiver that hears nothing for longer than the deadline makes the root
// fail; the frames the root had in flight are abandoned (re-sent empty) so
// that, once the receiver is back, both ends of the channel agree again and
// the next broadcast goes through.
TEST_F(HostileFrames, AFailedBroadcastLeavesTheChannelsUsable) {
  std::vector<std::byte> a(32 * kSeg), b(32 * kSeg);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<std::byte>(i * 13 + 1);
  Submission s;
  s.op = 1; s.root = 0; s.algo = algos::Algo::Chain; s.size = a.size();
  s.buffer = a.data();
  nodes_[0]->submit(s);
  s.buffer = b.data();
  nodes_[1]->submit(s);
  auto drain_rank1 = [&] {
    rte_mbuf* burst[32];
    uint16_t n;
    while ((n = fabric_->port(1).rx_burst(0, burst, 32)) > 0)
      for (uint16_t i = 0; i < n; ++i) rte_pktmbuf_free(burst[i]);
  };
  auto deaf_rank1 = [&](int iterations) {
    for (int i = 0; i < iterations; ++i) {
      now_ += 1000;
      fabric_->poll(now_);
      nodes_[0]->poll(now_);
      drain_rank1();
    }
  };
  deaf_rank1(200);
  now_ += 3'000'000'000;  // past the 2 s deadline
  deaf_rank1(10);
  CompletionRecord rec;
  ASSERT_TRUE(nodes_[0]->take_completion(&rec));
  EXPECT_EQ(rec.error, OpError::PeerSilent);
  EXPECT_EQ(rec.peer, 1u);

  // Rank 1 is back: it hears the abandoned frames, and gives op 1 up itself.
  run(200);
  now_ += 3'000'000'000;
  run(50);
  ASSERT_TRUE(nodes_[1]->take_completion(&rec));
  EXPECT_EQ(rec.error, OpError::NoProgress);
  EXPECT_GT(nodes_[0]->counters().tx_abandoned.get(), 0u);
  EXPECT_GT(nodes_[1]->counters().rx_abandoned.get(), 0u);
  EXPECT_EQ(nodes_[1]->counters().rx_out_of_window.get(), 0u);

  // The next broadcast goes through with the root's bytes.
  std::fill(b.begin(), b.end(), std::byte{0});
  ASSERT_TRUE(broadcast(a, b, 2));
  EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size()));
}

}  // namespace
}  // namespace lanecast::engine
