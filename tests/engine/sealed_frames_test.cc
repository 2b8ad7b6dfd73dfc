// A group with a key under fire from the segment, in virtual time: the
// attacker holds a member's MAC, the group id and epoch, and computes valid
// CRCs - but not the key. Forged frames (no seal, a wrong key), genuine
// frames replayed, and a genuine frame whose payload was changed in flight
// keeping its CRC are dropped and counted under their reasons; none is
// delivered, none fails a broadcast, and every broadcast completes with the
// root's bytes. Without a key the same payload change is delivered: what the
// seal adds.
#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "drivers/ethernet.h"
#include "engine/auth/epoch_keys.h"
#include "engine/auth/frame_auth.h"
#include "engine/checksum/crc32c.h"
#include "engine/node/node.h"
#include "engine/wire/wire.h"
#include "tests/engine/node_harness.h"
#include "tests/engine/port_decorator.h"

namespace lanecast::engine {
namespace {

constexpr uint32_t kSeg = 256;
constexpr uint32_t kGroup = 7;
constexpr uint32_t kEpoch = 5;
constexpr uint16_t kLink = drivers::ethernet::kHeaderBytes;

// A copy of a whole frame in one fresh buffer (chains flattened).
rte_mbuf* flat_copy(const rte_mbuf* m, rte_mempool* pool) {
  rte_mbuf* c = rte_pktmbuf_alloc(pool);
  if (c == nullptr) return nullptr;
  auto* dst = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(c, static_cast<uint16_t>(m->pkt_len)));
  const void* src = dst == nullptr ? nullptr : rte_pktmbuf_read(m, 0, m->pkt_len, dst);
  if (src == nullptr) {
    rte_pktmbuf_free(c);
    return nullptr;
  }
  if (src != dst) std::memcpy(dst, src, m->pkt_len);
  return c;
}

// Bit positions in a payload of `len` bytes whose flipping, all together,
// leaves its CRC-32C as it was: the CRC is affine over GF(2), so the
// changes that 33 single-bit flips make are linearly dependent, and some
// subset of them cancels. What a forger does to keep a frame's CRC.
std::vector<uint32_t> crc_neutral_flips(uint32_t len) {
  const std::vector<uint8_t> zero(len, 0);
  const uint32_t base = crc32c(0, zero.data(), len);
  struct Row {
    uint32_t delta;   // the CRC's change
    uint64_t which;   // the candidate flips that make it, one bit each
  };
  std::vector<uint32_t> candidates;
  std::vector<Row> basis;  // reduced rows, each with its own leading bit
  for (uint32_t bit = 0; bit < 8 * len && candidates.size() < 64; bit += 8 * len / 64 + 1) {
    std::vector<uint8_t> one(len, 0);
    one[bit / 8] = static_cast<uint8_t>(1u << (bit % 8));
    Row r{crc32c(0, one.data(), len) ^ base, uint64_t{1} << candidates.size()};
    candidates.push_back(bit);
    for (const Row& b : basis)
      if ((r.delta ^ b.delta) < r.delta) {  // b's leading bit is set in r
        r.delta ^= b.delta;
        r.which ^= b.which;
      }
    if (r.delta == 0) {
      std::vector<uint32_t> flips;
      for (size_t i = 0; i < candidates.size(); ++i)
        if (r.which >> i & 1) flips.push_back(candidates[i]);
      return flips;
    }
    basis.push_back(r);
    std::sort(basis.begin(), basis.end(), [](const Row& a, const Row& b) { return a.delta > b.delta; });
  }
  return {};
}

// Rank 0's port keeps a copy of every frame it sends (what a host on the
// segment captures).
class Recorder final : public test::PortDecorator {
 public:
  Recorder(drivers::Port& in, rte_mempool* pool) : PortDecorator(in), pool_(pool) {}
  ~Recorder() override {
    for (rte_mbuf* m : frames_) rte_pktmbuf_free(m);
  }
  uint16_t tx_burst(uint16_t lane, rte_mbuf** frames, uint16_t count) override {
    if (recording_)
      for (uint16_t i = 0; i < count; ++i)
        if (rte_mbuf* c = flat_copy(frames[i], pool_)) frames_.push_back(c);
    return in_.tx_burst(lane, frames, count);
  }
  void stop() { recording_ = false; }
  std::vector<rte_mbuf*>& frames() { return frames_; }

 private:
  rte_mempool* pool_;
  bool recording_ = true;
  std::vector<rte_mbuf*> frames_;
};

// Rank 1's port hands over its first data frames with a payload changed in
// flight - bits flipped so that the CRC stays right (a man in the middle).
class Tamperer final : public test::PortDecorator {
 public:
  Tamperer(drivers::Port& in, rte_mempool* pool) : PortDecorator(in), pool_(pool), flips_(crc_neutral_flips(kSeg)) {}
  uint16_t rx_burst(uint16_t lane, rte_mbuf** frames, uint16_t max) override {
    const uint16_t n = in_.rx_burst(lane, frames, max);
    for (uint16_t i = 0; i < n && tampered_ < to_tamper_; ++i) {
      wire::Parsed p;
      if (wire::parse(frames[i], kLink, &p) != wire::Verdict::Ok || p.type != wire::FrameType::Data ||
          p.data.payload_len != kSeg)
        continue;
      rte_mbuf* c = flat_copy(frames[i], pool_);  // the fabric shares payloads: change a copy
      if (c == nullptr) continue;
      auto* pay = rte_pktmbuf_mtod_offset(c, uint8_t*, p.payload_offset);
      for (uint32_t bit : flips_) pay[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
      rte_pktmbuf_free(frames[i]);
      frames[i] = c;
      ++tampered_;
    }
    return n;
  }
  void tamper(uint32_t frames) { to_tamper_ = tampered_ + frames; }
  uint32_t tampered() const { return tampered_; }
  size_t flips() const { return flips_.size(); }

 private:
  rte_mempool* pool_;
  std::vector<uint32_t> flips_;
  uint32_t tampered_ = 0, to_tamper_ = 0;
};

class SealedFrames : public ::testing::Test {
 protected:
  virtual bool keyed() const { return true; }
  virtual uint32_t nodes() const { return 2; }
  virtual uint32_t recorded() const { return 0; }  // whose frames the Recorder keeps

  void SetUp() override {
    test::NodeHarness::Options o;
    o.nodes = nodes();
    o.extra_ports = 1;  // port nodes(): the attacker
    o.node.group_id = kGroup;
    o.node.epoch = kEpoch;
    o.node.segment_bytes = kSeg;
    o.node.max_message_bytes = 64 * kSeg;
    o.node.peer_timeout_ns = 2'000'000'000;
    o.fabric.max_frame_bytes = 2000;
    if (keyed())
      o.node.auth = std::make_shared<const auth::EpochKeys>(auth::derive_formation_keys(*key_, kGroup, kEpoch, {}));
    o.wrap = [this](uint32_t rank, drivers::Port& inner) -> std::unique_ptr<drivers::Port> {
      if (rank == recorded()) {
        auto r = std::make_unique<Recorder>(inner, spare_);
        recorder_ = r.get();
        return r;
      }
      if (rank != 1) return nullptr;
      auto t = std::make_unique<Tamperer>(inner, spare_);
      tamperer_ = t.get();
      return t;
    };
    lanecast::test::start_eal();
    spare_ = rte_pktmbuf_pool_create(("sealed" + std::to_string(instance_++)).c_str(), 8191, 0, 0,
                                     RTE_PKTMBUF_HEADROOM + 2048, SOCKET_ID_ANY);
    ASSERT_NE(spare_, nullptr);
    h_ = std::make_unique<test::NodeHarness>(o);
  }
  void TearDown() override {
    h_.reset();
    rte_mempool_free(spare_);
  }

  // A frame to rank 1 from the attacker's port with rank 0's MAC as source.
  template <typename F>
  void inject(uint16_t len, F&& fill) {
    rte_mbuf* m = rte_pktmbuf_alloc(spare_);
    ASSERT_NE(m, nullptr);
    auto* p = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, len));
    ASSERT_NE(p, nullptr);
    std::memset(p, 0, len);
    drivers::ethernet::write_header(p, h_->fabric().address(1), h_->fabric().address(0));
    fill(p + kLink);
    send_from_attacker(m);
  }
  void send_from_attacker(rte_mbuf* m) {
    rte_mbuf* one[1] = {m};
    ASSERT_EQ(h_->fabric().port(nodes()).tx_burst(0, one, 1), 1);
  }
  // A data frame of broadcast `op` from "rank 0": every CRC right, sealed
  // with `wrong` keys when given.
  void inject_data(uint32_t op, uint32_t seq, uint32_t seg, const auth::EpochKeys* wrong) {
    const uint32_t seals = wrong ? wire::seal_bytes(wire::FrameType::Data) : 0;
    inject(static_cast<uint16_t>(kLink + wire::kDataHeaderBytes + seals + kSeg), [&](uint8_t* lc) {
      uint8_t* pay = lc + wire::kDataHeaderBytes + seals;
      std::memset(pay, 0xEE, kSeg);
      wire::DataBody b{};
      b.op = op; b.root = 0; b.seq = seq; b.segment = seg; b.offset = uint64_t{seg} * kSeg;
      b.total_len = 4 * kSeg; b.payload_len = kSeg; b.payload_crc = crc32c(0, pay, kSeg);
      b.segment_bytes = kSeg; b.algo = static_cast<uint8_t>(algos::Algo::Chain);
      wire::write_data(lc, {kGroup, kEpoch, 0}, b, wrong ? wire::kFlagSealed : 0);
      if (wrong) {
        auth::FrameAuth forger(*wrong, 0, 2);
        wire::write_payload_seal(lc, forger.seal_payload(pay, kSeg));
        forger.seal_frame(lc - kLink, kLink, wire::frame_seal_at(wire::FrameType::Data));
      }
    });
  }

  bool broadcast(std::vector<std::vector<std::byte>>& bufs, algos::Rank root = 0,
                 algos::Algo algo = algos::Algo::Chain) {
    const auto recs = h_->broadcast(root, algo, bufs, 2'000'000);
    for (const CompletionRecord& r : recs)
      if (r.op == 0 || r.error != OpError::None) return false;
    return true;
  }
  std::vector<std::vector<std::byte>> message(uint8_t salt, algos::Rank root = 0) {
    std::vector<std::vector<std::byte>> bufs(nodes(), std::vector<std::byte>(4 * kSeg));
    for (size_t i = 0; i < bufs[root].size(); ++i) bufs[root][i] = static_cast<std::byte>(i * 31 + salt);
    return bufs;
  }

  static inline uint32_t instance_ = 0;
  std::shared_ptr<const AuthKey> key_ = AuthKey::from_hex(std::string(64, '5'), "test");
  rte_mempool* spare_ = nullptr;
  Recorder* recorder_ = nullptr;
  Tamperer* tamperer_ = nullptr;
  std::unique_ptr<test::NodeHarness> h_;
};

// Frames forged from the attacker's port for the broadcast the members are
// about to run - unsealed, or sealed under another key - are dropped before
// anything reads them; the broadcast then completes with the root's bytes.
TEST_F(SealedFrames, ForgedFramesAreNeverTaken) {
  const auto& c = h_->node(1).counters();
  const auth::EpochKeys wrong = auth::derive_formation_keys(*AuthKey::from_hex(std::string(64, '6'), "wrong"), kGroup,
                                                        kEpoch, {});
  for (uint32_t s = 0; s < 4; ++s) inject_data(1, s, s, nullptr);  // the whole message, first
  for (uint32_t s = 0; s < 4; ++s) inject_data(1, s, s, &wrong);
  inject(static_cast<uint16_t>(kLink + wire::kFailedBytes), [&](uint8_t* lc) {  // "rank 0 is lost"
    wire::FailedBody f{};
    f.culprit = 0;
    f.reporter = 0;
    wire::write_failed(lc, {kGroup, kEpoch, 0}, f);
  });
  h_->run(50);
  EXPECT_EQ(c.rx_unsealed.get(), 5u);
  EXPECT_EQ(c.rx_bad_tag.get(), 4u);
  EXPECT_EQ(c.rx_data.get() + c.stash.kept.get(), 0u);
  auto bufs = message(1);
  ASSERT_TRUE(broadcast(bufs));
  EXPECT_EQ(bufs[0], bufs[1]);
  EXPECT_EQ(c.ops_failed.get(), 0u);
}

// Genuine frames of a broadcast, captured and sent again later (and again
// after the next broadcast): each counter opens once.
TEST_F(SealedFrames, ReplayedFramesAreNeverTakenTwice) {
  const auto& c = h_->node(1).counters();
  auto first = message(2);
  ASSERT_TRUE(broadcast(first));
  recorder_->stop();
  const uint64_t data_before = c.rx_data.get(), acks_before = h_->node(0).counters().rx_acks.get();
  ASSERT_FALSE(recorder_->frames().empty());
  for (int round = 0; round < 2; ++round) {
    for (rte_mbuf* f : recorder_->frames()) {
      rte_mbuf* copy = flat_copy(f, spare_);
      ASSERT_NE(copy, nullptr);
      send_from_attacker(copy);
    }
    h_->run(100);
    auto next = message(static_cast<uint8_t>(10 + round));
    ASSERT_TRUE(broadcast(next));
    EXPECT_EQ(next[0], next[1]);
  }
  EXPECT_EQ(c.rx_replayed.get() + c.rx_stale_counter.get(), 2 * recorder_->frames().size());
  EXPECT_EQ(c.rx_data.get() - data_before, 2 * 4u) << "only the two new broadcasts' segments";
  EXPECT_GE(h_->node(0).counters().rx_acks.get() - acks_before, 2u);
  EXPECT_EQ(c.ops_failed.get(), 0u);
}

// A genuine frame's payload changed in flight, its CRC kept: with a key its
// seal does not open, the frame is dropped and sent again, and the
// broadcast holds the root's bytes; without one the change is delivered.
class KeyOrNot : public SealedFrames, public ::testing::WithParamInterface<bool> {
 protected:
  bool keyed() const override { return GetParam(); }
};

TEST_P(KeyOrNot, APayloadChangedInFlightKeepingItsCrc) {
  ASSERT_GT(tamperer_->flips(), 0u);
  const auto& c = h_->node(1).counters();
  tamperer_->tamper(2);
  auto bufs = message(3);
  ASSERT_TRUE(broadcast(bufs));
  EXPECT_EQ(tamperer_->tampered(), 2u);
  EXPECT_EQ(c.rx_malformed[static_cast<size_t>(wire::Verdict::BadPayloadCrc)].get(), 0u) << "the CRC holds";
  if (keyed()) {
    EXPECT_EQ(c.rx_bad_payload_seal.get(), 2u);
    EXPECT_EQ(bufs[0], bufs[1]);
  } else {
    EXPECT_NE(bufs[0], bufs[1]) << "a CRC is not a seal";
  }
}

INSTANTIATE_TEST_SUITE_P(SealedFrames, KeyOrNot, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "WithAKey" : "WithoutAKey"; });

// Three members; rank 1 forwards rank 0's broadcasts to rank 2 (chain) and
// its frames are captured.
class ThreeMembers : public SealedFrames {
 protected:
  uint32_t nodes() const override { return 3; }
  uint32_t recorded() const override { return 1; }
};

// Genuine frames sent again to a member they were not sent to. A receiver's
// window is per sender, not per pair: rank 0 never saw the counters rank 1
// used for rank 2, so only the tag can tell that these frames were not for
// it - it covers the link header, destination included. (When it did not,
// rank 0 took them: its channel from rank 1 moved past sequence numbers rank
// 1 never sent it, and rank 1's next broadcast to rank 0 was acknowledged
// and dropped as duplicates, never delivered.)
TEST_F(ThreeMembers, FramesSentAgainToAnotherMemberAreRefused) {
  const auto& c = h_->node(0).counters();
  auto first = message(4);
  ASSERT_TRUE(broadcast(first));
  recorder_->stop();
  const drivers::PeerAddress to2 = h_->fabric().address(2), to0 = h_->fabric().address(0);
  uint64_t redirected = 0;
  for (rte_mbuf* f : recorder_->frames()) {
    if (std::memcmp(rte_pktmbuf_mtod(f, const uint8_t*), to2.bytes, 6) != 0) continue;
    rte_mbuf* copy = flat_copy(f, spare_);
    ASSERT_NE(copy, nullptr);
    std::memcpy(rte_pktmbuf_mtod(copy, uint8_t*), to0.bytes, 6);  // the Ethernet destination: rank 0
    send_from_attacker(copy);
    ++redirected;
  }
  ASSERT_GE(redirected, 4u) << "rank 1 forwarded 4 segments to rank 2";
  h_->run(100);
  EXPECT_EQ(c.rx_bad_tag.get(), redirected);
  EXPECT_EQ(c.rx_stale_op.get(), 0u) << "none of them taken";
  auto next = message(5, 1);
  ASSERT_TRUE(broadcast(next, 1, algos::Algo::Linear)) << "rank 1 to rank 0 on the channel the frames moved";
  for (uint32_t r = 0; r < nodes(); ++r) EXPECT_EQ(next[r], next[1]) << "rank " << r;
  EXPECT_EQ(c.ops_failed.get(), 0u);
}

}  // namespace
}  // namespace lanecast::engine
