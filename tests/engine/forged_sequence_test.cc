// A group without a key, attacked with one forged frame that carries the
// right CRCs, a member's address and rank, and a sequence number where it
// hurts the most - as an attacker on the segment writes it after reading
// the channels' numbers off the wire. Without a key it can spoil the
// broadcast running (docs/security.md); what it must not do is wedge the
// channel: the broadcasts after it complete, and the one it hit ends - done
// or failed naming its cause - within the peer timeout's bound, never hangs.
//
// The forged ack acknowledges, for rank 1, frames the switch lost on their
// way to it: before, its sender let them go and never sent them again,
// rank 1's window stayed at the first of them, every later frame of the
// channel fell out of that window, and every later broadcast failed
// ("stopped acknowledging") for the life of the group.
#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <cstring>
#include <memory>
#include <vector>

#include "drivers/ethernet.h"
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
constexpr uint64_t kPeerTimeout = 200'000'000;
constexpr uint64_t kStepNs = 10'000;

// What the attacker reads off the wire at a member's port: the newest data
// sequence number and cumulative ack that came in. It also loses the
// frames `lose` picks (the switch's loss, not the attacker's).
class Tap final : public test::PortDecorator {
 public:
  explicit Tap(drivers::Port& inner) : PortDecorator(inner) {}
  uint16_t rx_burst(uint16_t lane, rte_mbuf** frames, uint16_t max) override {
    const uint16_t n = in_.rx_burst(lane, frames, max);
    uint16_t kept = 0;
    for (uint16_t i = 0; i < n; ++i) {
      wire::Parsed p;
      if (wire::parse(frames[i], in_.link_header_bytes(), &p) == wire::Verdict::Ok) {
        if (p.type == wire::FrameType::Data) {
          if (!seen_data || static_cast<int32_t>(p.data.seq - newest_seq) > 0) newest_seq = p.data.seq;
          seen_data = true;
          if (lose_from != 0 && p.data.seq >= lose_from && p.data.seq < lose_from + lose_count) {
            rte_pktmbuf_free(frames[i]);
            continue;
          }
        }
        if (p.type == wire::FrameType::Ack) cum_ack = p.ack.cum_ack;
      }
      frames[kept++] = frames[i];
    }
    return kept;
  }
  bool seen_data = false;
  uint32_t newest_seq = 0, cum_ack = 0;
  uint32_t lose_from = 0, lose_count = 0;
};

class ForgedSequence : public ::testing::Test {
 protected:
  void SetUp() override {
    test::NodeHarness::Options o;
    o.nodes = 2;
    o.extra_ports = 1;  // the attacker's
    o.node.group_id = kGroup;
    o.node.epoch = kEpoch;
    o.node.segment_bytes = kSeg;
    o.node.max_message_bytes = 64 * kSeg;
    o.node.peer_timeout_ns = kPeerTimeout;
    o.fabric.max_frame_bytes = 2000;
    o.wrap = [this](uint32_t rank, drivers::Port& inner) -> std::unique_ptr<drivers::Port> {
      auto t = std::make_unique<Tap>(inner);
      taps_[rank] = t.get();
      return t;
    };
    h_ = std::make_unique<test::NodeHarness>(o);
  }

  // A frame from the attacker's port to `to`, in `as`'s name and address.
  template <typename F>
  void inject(uint32_t as, uint32_t to, uint16_t len, F&& fill) {
    rte_mbuf* m = rte_pktmbuf_alloc(h_->payload_pool(0));
    ASSERT_NE(m, nullptr);
    auto* p = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, len));
    ASSERT_NE(p, nullptr);
    std::memset(p, 0, len);
    drivers::ethernet::write_header(p, h_->fabric().address(to), h_->fabric().address(as));
    fill(p + drivers::ethernet::kHeaderBytes);
    rte_mbuf* one[1] = {m};
    ASSERT_EQ(h_->fabric().port(2).tx_burst(0, one, 1), 1);
  }
  void forge_ack(uint32_t cum) {
    inject(1, 0, static_cast<uint16_t>(14 + wire::kAckHeaderBytes), [&](uint8_t* p) {
      wire::AckBody a{};
      a.cum_ack = cum;
      wire::write_ack(p, {kGroup, kEpoch, 1}, a);
    });
  }
  void forge_data(uint32_t op, uint32_t seq) {
    inject(0, 1, static_cast<uint16_t>(14 + wire::kDataHeaderBytes + kSeg), [&](uint8_t* p) {
      uint8_t* pay = p + wire::kDataHeaderBytes;
      std::memset(pay, 0xEE, kSeg);
      wire::DataBody b{};
      b.op = op; b.root = 0; b.seq = seq; b.segment = 0; b.offset = 0;
      b.total_len = 16 * kSeg; b.payload_len = kSeg; b.payload_crc = crc32c(0, pay, kSeg);
      b.segment_bytes = kSeg; b.algo = static_cast<uint8_t>(algos::Algo::Chain);
      wire::write_data(p, {kGroup, kEpoch, 0}, b, 0);
    });
  }

  std::vector<std::vector<std::byte>> buffers(uint8_t fill) {
    std::vector<std::vector<std::byte>> b(2, std::vector<std::byte>(16 * kSeg));
    for (size_t i = 0; i < b[0].size(); ++i) b[0][i] = std::byte(static_cast<uint8_t>(i * 13 + fill));
    return b;
  }
  // A broadcast from rank 0, run until both members end it or five peer
  // timeouts pass (a hang); each member's record.
  std::vector<CompletionRecord> broadcast(std::vector<std::vector<std::byte>>& bufs) {
    return h_->broadcast(0, algos::Algo::Chain, bufs, 5 * kPeerTimeout / kStepNs, kStepNs);
  }
  // Both ended it: completed, or failed with a named cause.
  static void expect_ended(const std::vector<CompletionRecord>& recs) {
    for (uint32_t r = 0; r < 2; ++r) {
      EXPECT_NE(recs[r].op, 0u) << "rank " << r << " never ended the attacked broadcast";
      if (recs[r].op != 0 && recs[r].error != OpError::None) {
        EXPECT_TRUE(recs[r].error == OpError::PeerSilent || recs[r].error == OpError::NoProgress ||
                    recs[r].error == OpError::Mismatch)
            << "rank " << r << " error " << static_cast<int>(recs[r].error);
      }
    }
  }
  // The next broadcasts complete, every byte.
  void expect_next_broadcasts_complete() {
    for (uint8_t k = 0; k < 3; ++k) {
      std::vector<std::vector<std::byte>> bufs = buffers(static_cast<uint8_t>(40 + k));
      const std::vector<CompletionRecord> recs = broadcast(bufs);
      for (uint32_t r = 0; r < 2; ++r) {
        EXPECT_NE(recs[r].op, 0u) << "broadcast " << int(k) << " after the attack: rank " << r << " never ended it";
        EXPECT_EQ(recs[r].error, OpError::None)
            << "broadcast " << int(k) << " after the attack: rank " << r << " error " << static_cast<int>(recs[r].error);
      }
      EXPECT_TRUE(test::all_equal(bufs, 0)) << "broadcast " << int(k) << " after the attack";
    }
  }
  // One broadcast to learn the channels' numbers (what an attacker does).
  void warm_up() {
    std::vector<std::vector<std::byte>> bufs = buffers(1);
    const std::vector<CompletionRecord> recs = broadcast(bufs);
    ASSERT_EQ(recs[1].error, OpError::None);
    ASSERT_TRUE(taps_[1]->seen_data);
  }

  std::unique_ptr<test::NodeHarness> h_;
  Tap* taps_[2] = {};
};

// The switch loses a run of rank 0's frames to rank 1; the attacker, who
// saw them go by, acknowledges them in rank 1's name.
TEST_F(ForgedSequence, AForgedAckOfLostFramesWedgesNoChannel) {
  warm_up();
  const uint32_t first = taps_[1]->newest_seq + 1;  // the attacked broadcast's first frame to rank 1
  taps_[1]->lose_from = first + 2;
  taps_[1]->lose_count = 3;
  std::vector<std::vector<std::byte>> bufs = buffers(2);
  for (uint32_t r = 0; r < 2; ++r) {
    Submission s;
    s.op = h_->next_op(); s.root = 0; s.algo = algos::Algo::Chain; s.size = bufs[0].size();
    s.buffer = bufs[r].data();
    h_->node(r).submit(s);
  }
  h_->skip_op();
  for (int i = 0; i < 100'000 && taps_[1]->newest_seq < first + 8; ++i) h_->step(kStepNs);
  ASSERT_GE(taps_[1]->newest_seq, first + 8) << "rank 0 sent past the lost frames";
  forge_ack(taps_[1]->newest_seq + 1);
  const uint64_t forged_at = h_->now();
  taps_[1]->lose_from = 0;
  std::vector<CompletionRecord> recs(2);
  for (uint64_t i = 0; i < 5 * kPeerTimeout / kStepNs; ++i) {
    h_->step(kStepNs);
    if (h_->node(0).completions().ready(2) && h_->node(1).completions().ready(2)) break;
  }
  for (uint32_t r = 0; r < 2; ++r)
    if (h_->node(r).completions().ready(2)) recs[r] = h_->node(r).completions().record(2);
  expect_ended(recs);
  EXPECT_LE(h_->now() - forged_at, 2 * kPeerTimeout) << "the attacked broadcast ended late";
  expect_next_broadcasts_complete();
  EXPECT_GT(h_->node(0).counters().tx_fillers.get(), 0u) << "rank 0 sent the lost numbers again empty";
}

// Data in rank 0's name for the next broadcast, its sequence number just
// ahead of rank 1's window, at its far end (taken: the genuine frame of
// that number, a few broadcasts later, is then a duplicate and its segment
// never comes), or outside it. At most the broadcasts it hits fail, each
// naming its cause in time; the channel goes on.
TEST_F(ForgedSequence, ForgedDataAheadWedgesNoChannel) {
  for (const uint32_t ahead : {1u, 100u, 128u, 129u, 1000u, 1u << 30}) {
    SCOPED_TRACE(ahead);
    SetUp();  // a group of its own for each
    warm_up();
    forge_data(h_->next_op(), taps_[0]->cum_ack + ahead);
    uint32_t failed = 0;
    for (int k = 0; k < 12; ++k) {  // 12 x 16 frames: past the forged number
      std::vector<std::vector<std::byte>> bufs = buffers(static_cast<uint8_t>(3 + k));
      const std::vector<CompletionRecord> recs = broadcast(bufs);
      expect_ended(recs);
      if (recs[0].error != OpError::None || recs[1].error != OpError::None) ++failed;
    }
    // At the window's far end it costs two (the root's, then rank 1's).
    EXPECT_LE(failed, 2u);
    expect_next_broadcasts_complete();
  }
}

}  // namespace
}  // namespace lanecast::engine
