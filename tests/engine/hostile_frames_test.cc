// A node under fire from the wire: every kind of malformed, foreign,
// forged or out-of-place frame is dropped and counted under its own reason,
// nothing leaks, and the node still completes a real broadcast afterwards.
#include <gtest/gtest.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "drivers/ethernet.h"
#include "engine/checksum/crc32c.h"
#include "engine/node/node.h"
#include "engine/stream/batch_format.h"
#include "engine/wire/wire.h"
#include "tests/engine/node_harness.h"
#include "tests/engine/dropping_port.h"

namespace lanecast::engine {
namespace {

constexpr uint32_t kSeg = 256;
constexpr uint32_t kGroup = 7;
constexpr uint32_t kEpoch = 5;

test::NodeHarness::Options hostile_options() {
  test::NodeHarness::Options o;
  o.nodes = 2;        // ranks 0 and 1 form the group
  o.extra_ports = 1;  // port 2 is the attacker
  o.node.group_id = kGroup;
  o.node.epoch = kEpoch;
  o.node.segment_bytes = kSeg;
  o.node.max_message_bytes = 64 * kSeg;
  o.node.peer_timeout_ns = 2'000'000'000;
  o.fabric.max_frame_bytes = 2000;
  return o;
}

class HostileFrames : public ::testing::Test {
 protected:
  void SetUp() override {
    h_ = std::make_unique<test::NodeHarness>(hostile_options());
    free_payload_ = rte_mempool_avail_count(h_->payload_pool(0));
    free_header_ = rte_mempool_avail_count(h_->header_pool());
  }

  // A frame to rank 1 sent from fabric port `from`, built by `fill`.
  template <typename F>
  void inject(uint16_t len, F&& fill, uint32_t from = 2, uint32_t to = 1) {
    rte_mbuf* m = rte_pktmbuf_alloc(h_->payload_pool(0));
    ASSERT_NE(m, nullptr);
    auto* p = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, len));
    ASSERT_NE(p, nullptr);
    std::memset(p, 0, len);
    if (len >= drivers::ethernet::kHeaderBytes)
      drivers::ethernet::write_header(p, h_->fabric().address(to), h_->fabric().address(from));
    fill(p);
    rte_mbuf* one[1] = {m};
    ASSERT_EQ(h_->fabric().port(from).tx_burst(0, one, 1), 1);
  }

  // A well-formed data frame (both CRCs right) with the given fields.
  void inject_data(uint32_t group, uint32_t src, uint32_t op, uint32_t seq, uint32_t seg, uint64_t total,
                   uint32_t len, uint32_t from = 2, uint32_t payload_crc_xor = 0, uint32_t epoch = kEpoch,
                   wire::FrameType type = wire::FrameType::Data) {
    const uint16_t frame = static_cast<uint16_t>(14 + wire::kDataHeaderBytes + len);
    inject(frame, [&](uint8_t* p) {
      uint8_t* pay = p + 14 + wire::kDataHeaderBytes;
      std::memset(pay, 0xC3, len);
      wire::DataBody b{};
      b.op = op; b.root = 0; b.seq = seq; b.segment = seg; b.offset = uint64_t{seg} * kSeg;
      b.total_len = total; b.payload_len = len; b.payload_crc = crc32c(0, pay, len) ^ payload_crc_xor;
      b.segment_bytes = kSeg; b.algo = static_cast<uint8_t>(algos::Algo::Chain);
      wire::write_data(p + 14, {group, epoch, src}, b, 0, type);
    }, from);
  }

  void inject_ack(uint32_t src, uint32_t cum, uint32_t from, uint32_t to = 1) {
    inject(static_cast<uint16_t>(14 + wire::kAckHeaderBytes), [&](uint8_t* p) {
      wire::AckBody a{};
      a.cum_ack = cum;
      wire::write_ack(p + 14, {kGroup, kEpoch, src}, a);
    }, from, to);
  }

  // Up to a virtual second: after a failure, abandoned frames wait for their
  // backed-off timers before the channel moves on.
  bool broadcast(std::vector<std::byte>& src, std::vector<std::byte>& dst) {
    std::vector<std::vector<std::byte>> bufs{src, dst};
    const auto recs = h_->broadcast(0, algos::Algo::Chain, bufs, 1'000'000);
    dst = bufs[1];
    return recs[0].op != 0 && recs[1].op != 0 && recs[0].error == OpError::None && recs[1].error == OpError::None;
  }

  // The root (rank 0) posts op 1, a linear broadcast of `a` to rank 1, which
  // is gone; returns the time of posting.
  uint64_t post_to_gone_rank1(std::vector<std::byte>& a) {
    Submission s;
    s.op = 1; s.root = 0; s.algo = algos::Algo::Linear; s.size = a.size();
    s.buffer = a.data();
    h_->node(0).submit(s);
    return h_->now();
  }

  // Whether op 1 failed on the root for rank 1's silence within twice the
  // deadline after `start`.
  void expect_silent_verdict(uint64_t start) {
    ASSERT_TRUE(h_->node(0).completions().ready(1)) << "still running after 10 s";
    const CompletionRecord rec = h_->node(0).completions().record(1);
    EXPECT_EQ(rec.error, OpError::PeerSilent);
    EXPECT_LE(h_->now() - start, 2 * hostile_options().node.peer_timeout_ns);
  }

  // One step in which rank 1 is gone: it neither polls nor keeps what the
  // switch delivers to it.
  // Time passes while the root looks (a jump of the clock would be a stall
  // of its core, which is nobody's silence).
  void pass_without_rank1(uint64_t ns) {
    for (uint64_t t = 0; t < ns; t += 400'000) {
      h_->advance(399'000);
      step_without_rank1();
    }
  }

  void step_without_rank1() {
    h_->advance(1000);
    h_->fabric().poll(h_->now());
    h_->node(0).poll(h_->now());
    rte_mbuf* burst[32];
    uint16_t n;
    while ((n = h_->fabric().port(1).rx_burst(0, burst, 32)) > 0)
      for (uint16_t k = 0; k < n; ++k) rte_pktmbuf_free(burst[k]);
  }

  // Streams: appends a record (its head and `bytes` bytes of 0x5A) to a
  // batch's payload.
  static void stream_record(std::vector<uint8_t>& p, uint32_t piece_field, uint32_t msg_len, size_t bytes) {
    stream::RecordHead head{piece_field, msg_len, 1234};
    const size_t at = p.size();
    p.resize(at + sizeof head + bytes, 0x5A);
    stream::write_head(p.data() + at, head);
  }
  // A batch of rank 0's stream 0 to rank 1 (its child), as rank 0 sends it:
  // channel sequence number `seq`, batch `number`, `records` records.
  void inject_stream_batch(uint32_t seq, uint32_t number, const std::vector<uint8_t>& pay, uint64_t records,
                           uint32_t root = 0, uint32_t crc_xor = 0, uint32_t to = 1, uint32_t stream = 0) {
    inject(static_cast<uint16_t>(14 + wire::kDataHeaderBytes + pay.size()), [&](uint8_t* p) {
      std::memcpy(p + 14 + wire::kDataHeaderBytes, pay.data(), pay.size());
      wire::DataBody b{};
      b.op = stream; b.root = root; b.seq = seq; b.segment = number; b.offset = 0; b.total_len = records;
      b.payload_len = static_cast<uint32_t>(pay.size());
      b.payload_crc = crc32c(0, pay.data(), pay.size()) ^ crc_xor;
      b.segment_bytes = kSeg;
      wire::write_data(p + 14, {kGroup, kEpoch, 0}, b, wire::kFlagStream);
    }, /*from=*/0, to);
  }

  // Rank 0, the parent of rank 1 in rank 0's stream 0, gives up batch
  // `batch` (sends it again empty: abandoned) on channel sequence `seq`.
  void inject_given_up(uint32_t seq, uint32_t batch) {
    inject(static_cast<uint16_t>(14 + wire::kDataHeaderBytes), [&](uint8_t* p) {
      wire::DataBody b{};
      b.op = 0; b.root = 0; b.seq = seq; b.segment = batch; b.segment_bytes = kSeg;
      wire::write_data(p + 14, {kGroup, kEpoch, 0}, b, wire::kFlagAbandoned | wire::kFlagStream);
    }, /*from=*/0);
  }
  // Publishes one message of `len` bytes into a publisher's ring, its time
  // stamp and bytes all `fill`, as Publisher::publish lays it out.
  static void publish_filled(stream::RecordRing& ring, uint32_t len, uint8_t fill) {
    uint8_t* at = ring.reserve(8 + len, 0);
    ASSERT_NE(at, nullptr);
    std::memset(at, fill, 8 + len);
    ring.commit();
  }
  // What Member::open_stream hands a node: stream `index`'s ring (64 KiB).
  static std::unique_ptr<stream::PublisherShared> publisher(uint16_t index) {
    auto pub = std::make_unique<stream::PublisherShared>();
    pub->index = index;
    pub->ring_mem = stream::aligned_bytes(stream::RecordRing::bytes_for(1 << 16));
    pub->ring = stream::RecordRing::init(pub->ring_mem.get(), 1 << 16);
    return pub;
  }

  std::unique_ptr<test::NodeHarness> h_;
  unsigned free_payload_ = 0, free_header_ = 0;
};

TEST_F(HostileFrames, EveryBadFrameIsCountedAndTheNodeStillWorks) {
  const auto& c = h_->node(1).counters();
  // From the attacker. Too short for any header; wrong EtherType; addressed
  // to someone else.
  inject(20, [](uint8_t*) {});
  inject(100, [](uint8_t* p) { p[12] = 0x08; p[13] = 0x00; });
  inject(100, [](uint8_t* p) { const uint8_t nobody[6] = {2, 0, 0, 0, 0, 9}; std::memcpy(p, nobody, 6); });
  // Bad version, bad type, bad header CRC, bad length.
  inject(14 + wire::kDataHeaderBytes + 10, [](uint8_t* p) { p[14] = 99; });
  inject(14 + wire::kDataHeaderBytes + 10, [](uint8_t* p) { p[14] = wire::kVersion; p[15] = 77; });
  inject(14 + wire::kDataHeaderBytes + kSeg, [&](uint8_t* p) {
    wire::DataBody b{}; b.payload_len = kSeg; b.segment_bytes = kSeg; b.total_len = kSeg;
    wire::write_data(p + 14, {kGroup, kEpoch, 0}, b);
    p[14 + 20] ^= 1;  // header bit flip
  });
  inject(14 + wire::kDataHeaderBytes + 5, [&](uint8_t* p) {
    wire::DataBody b{}; b.payload_len = 500;  // claims more than the frame holds
    wire::write_data(p + 14, {kGroup, kEpoch, 0}, b);
  });
  // Well-formed but foreign: another group, a source outside the group, ourselves.
  inject_data(8, 0, 1, 2, 0, 4 * kSeg, kSeg);
  inject_data(kGroup, 5, 1, 0, 0, 4 * kSeg, kSeg);
  inject_data(kGroup, 1, 1, 0, 0, 4 * kSeg, kSeg);
  // Rank 0 in its earlier life (the group's previous epoch), from its own port.
  inject_data(kGroup, 0, 1, 0, 0, 4 * kSeg, kSeg, /*from=*/0, 0, kEpoch - 1);
  // Well-formed, claiming to be rank 0, from the attacker's address: forged.
  inject_data(kGroup, 0, 1, 0, 0, 4 * kSeg, kSeg);
  inject_ack(0, 0, 2);
  // Random garbage with our EtherType.
  std::mt19937_64 rng(99);
  for (int i = 0; i < 300; ++i) {
    const uint16_t len = static_cast<uint16_t>(14 + rng() % 400);
    inject(len, [&](uint8_t* p) {
      for (uint16_t k = 14; k < len; ++k) p[k] = static_cast<uint8_t>(rng());
      if (len > 15 && rng() % 2) p[14] = wire::kVersion;
    });
  }
  // From rank 0's own port, as a member gone wrong: a corrupt payload (not
  // acknowledged: it will be sent again), an operation further ahead than an
  // application may post (64: dropped, not acked, not kept), and two good
  // frames of the next operation (stashed for it).
  inject_data(kGroup, 0, 1, 0, 0, 4 * kSeg, kSeg, /*from=*/0, /*payload_crc_xor=*/1);
  inject_data(kGroup, 0, 1 + CompletionBox::kSlots, 5, 0, 4 * kSeg, kSeg, 0);
  inject_data(kGroup, 0, 1, 0, 0, 4 * kSeg, kSeg, 0);
  inject_data(kGroup, 0, 1, 1, 1, 4 * kSeg, kSeg, 0);
  h_->run(50);
  EXPECT_EQ(h_->fabric().counters().unknown_destination, 1u);  // the switch drops it
  EXPECT_EQ(c.rx_not_for_us.get(), 1u);                        // the foreign EtherType
  EXPECT_GE(c.rx_malformed[static_cast<size_t>(wire::Verdict::TooShort)].get(), 1u);
  EXPECT_GE(c.rx_malformed[static_cast<size_t>(wire::Verdict::BadLength)].get(), 1u);
  EXPECT_GE(c.rx_malformed[static_cast<size_t>(wire::Verdict::BadVersion)].get(), 1u);
  EXPECT_GE(c.rx_malformed[static_cast<size_t>(wire::Verdict::BadType)].get(), 1u);
  EXPECT_GE(c.rx_malformed[static_cast<size_t>(wire::Verdict::BadHeaderCrc)].get(), 1u);
  EXPECT_EQ(c.rx_malformed[static_cast<size_t>(wire::Verdict::BadPayloadCrc)].get(), 1u);
  EXPECT_EQ(c.rx_foreign_group.get(), 1u);
  EXPECT_EQ(c.rx_wrong_epoch.get(), 1u);
  EXPECT_EQ(c.rx_bad_source.get(), 2u);
  EXPECT_EQ(c.rx_spoofed.get(), 2u);
  EXPECT_EQ(c.rx_early_dropped.get(), 1u);
  EXPECT_EQ(c.delivered_bytes.get(), 0u);
  EXPECT_EQ(c.stash.kept.get(), 2u);
  EXPECT_EQ(c.rx_frames.get(), 3u + 4 + 3 + 1 + 2 + 300 + 4 - 1);  // the unknown MAC never arrives
  // Every dropped frame went back to its pool: only the two stashed remain out.
  EXPECT_EQ(rte_mempool_avail_count(h_->payload_pool(0)), free_payload_ - 2);

  // The stashed op-1 frames claim 4 segments from root 0: a real broadcast of
  // a different size must fail clearly on rank 1 instead of taking them.
  std::vector<std::byte> a(3 * kSeg + 5), b(3 * kSeg + 5);
  EXPECT_FALSE(broadcast(a, b));
  // The next broadcast (op 2) is clean and completes with the root's bytes.
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<std::byte>(i * 7);
  ASSERT_TRUE(broadcast(a, b));
  EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size()));
  h_->run(20);
  EXPECT_EQ(rte_mempool_avail_count(h_->header_pool()), free_header_);
}

// Multicast copies (datagrams) never touch a reliable channel: a forged one is
// refused, a corrupt one and one too far ahead are counted and dropped, two
// of the next broadcast are kept for it - none acknowledged, whatever
// sequence number it carries - and the broadcast then takes them and
// completes with the root's bytes.
TEST_F(HostileFrames, DatagramsNeverTouchAReliableChannel) {
  const auto& c = h_->node(1).counters();
  const uint64_t acks_before = c.tx_acks.get();
  constexpr auto kDatagram = wire::FrameType::Datagram;
  inject_data(kGroup, 0, 1, 0, 0, 4 * kSeg, kSeg, /*from=*/2, 0, kEpoch, kDatagram);   // forged
  inject_data(kGroup, 0, 1, 0, 0, 4 * kSeg, kSeg, /*from=*/0, 1, kEpoch, kDatagram);   // corrupt payload
  inject_data(kGroup, 0, 1 + CompletionBox::kSlots, 0, 0, 4 * kSeg, kSeg, 0, 0, kEpoch, kDatagram);  // too far
  inject_data(kGroup, 0, 1, 77, 0, 4 * kSeg, kSeg, 0, 0, kEpoch, kDatagram);           // kept
  inject_data(kGroup, 0, 1, 78, 2, 4 * kSeg, kSeg, 0, 0, kEpoch, kDatagram);           // kept
  h_->run(50);
  EXPECT_EQ(c.rx_spoofed.get(), 1u);
  EXPECT_EQ(c.rx_malformed[static_cast<size_t>(wire::Verdict::BadPayloadCrc)].get(), 1u);
  EXPECT_EQ(c.rx_datagram_early.get(), 1u);
  EXPECT_EQ(c.stash.kept.get(), 2u);
  EXPECT_EQ(c.tx_acks.get(), acks_before) << "a datagram was acknowledged";
  EXPECT_EQ(c.delivered_bytes.get(), 0u);
  // The root's broadcast of 4 segments of the same bytes (0xC3): rank 1 takes
  // segments 0 and 2 from the stash, the rest from the chain.
  std::vector<std::byte> a(4 * kSeg, std::byte{0xC3}), b(4 * kSeg);
  ASSERT_TRUE(broadcast(a, b));
  EXPECT_EQ(a, b);
  EXPECT_EQ(c.rx_datagrams.get(), 2u);
  EXPECT_EQ(c.rx_duplicate.get(), 0u);
  // And the channel goes on: a second broadcast.
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<std::byte>(i * 3);
  ASSERT_TRUE(broadcast(a, b));
  EXPECT_EQ(a, b);
  h_->run(20);
  EXPECT_EQ(rte_mempool_avail_count(h_->header_pool()), free_header_);
  EXPECT_EQ(rte_mempool_avail_count(h_->payload_pool(0)), free_payload_);
}

// Any host on the segment could otherwise speak for a member: here the
// attacker acknowledges everything rank 1 could be sent, claiming to be rank
// 1, while rank 1 is gone. The root must not report success for it.
TEST_F(HostileFrames, AForgedAckDoesNotCompleteABroadcast) {
  std::vector<std::byte> a(8 * kSeg);
  post_to_gone_rank1(a);  // rank 1 never posts and never polls
  for (int i = 0; i < 100; ++i) {
    step_without_rank1();
    inject_ack(1, 8, /*from=*/2, /*to=*/0);  // "rank 1 has seqs 0..7"
  }
  pass_without_rank1(3'000'000'000);  // past the deadline
  ASSERT_TRUE(h_->node(0).completions().ready(1));
  const CompletionRecord rec = h_->node(0).completions().record(1);
  EXPECT_EQ(rec.error, OpError::PeerSilent) << "the forged acks completed the broadcast";
  EXPECT_EQ(rec.peer, 1u);
  EXPECT_EQ(h_->node(0).counters().rx_spoofed.get(), 100u);
  EXPECT_EQ(h_->node(0).counters().rx_acks.get(), 0u);
}

// A peer that is gone fails the broadcast within its deadline even while the
// root's retransmission timer keeps firing and the root polls all along. (A
// timeout once restarted the silence clock too: the root retransmitted to a
// dead peer forever. Found by tests/fuzz/node_fuzz.)
TEST_F(HostileFrames, AGonePeerFailsTheBroadcastWhileTimersFire) {
  std::vector<std::byte> a(8 * kSeg);
  const uint64_t start = post_to_gone_rank1(a);
  while (!h_->node(0).completions().ready(1) && h_->now() - start < 10'000'000'000) step_without_rank1();
  expect_silent_verdict(start);
  EXPECT_GT(h_->node(0).counters().channels.rto_timeouts.get(), 3u) << "the timer fired meanwhile";
}

// The same while a flood keeps the root's receive queue full on every turn:
// timers wait for a queue to drain (the acks they wait for may be in it), but
// only a bounded number of turns, so a flood cannot hold off the verdict.
TEST_F(HostileFrames, AGonePeerFailsTheBroadcastUnderAFlood) {
  std::vector<std::byte> a(8 * kSeg);
  const uint64_t start = post_to_gone_rank1(a);
  uint64_t flood = 0;
  while (!h_->node(0).completions().ready(1) && h_->now() - start < 10'000'000'000) {
    // 32 a turn: the root reads a full burst on every turn.
    for (int k = 0; k < 32; ++k, ++flood) inject_ack(/*src=*/1, /*cum=*/0, /*from=*/2, /*to=*/0);  // forged: dropped
    h_->advance(100'000);
    step_without_rank1();
  }
  expect_silent_verdict(start);
  EXPECT_GT(h_->node(0).counters().timers_deferred.get(), 0u) << "the flood never filled a burst";
  EXPECT_EQ(h_->node(0).counters().rx_spoofed.get(), h_->node(0).counters().rx_frames.get()) << "only forged frames came";
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
  h_->node(0).submit(s);
  s.buffer = b.data();
  h_->node(1).submit(s);
  h_->skip_op();  // op 1 is posted by hand
  for (int i = 0; i < 200; ++i) step_without_rank1();
  pass_without_rank1(3'000'000'000);  // past the 2 s deadline
  ASSERT_TRUE(h_->node(0).completions().ready(1));
  CompletionRecord rec = h_->node(0).completions().record(1);
  EXPECT_EQ(rec.error, OpError::PeerSilent);
  EXPECT_EQ(rec.peer, 1u);

  // Rank 1 is back: it hears the abandoned frames, and gives op 1 up itself.
  h_->run(2000);
  h_->run(7500, 400'000);  // 3 s pass, every member looking
  ASSERT_TRUE(h_->node(1).completions().ready(1));
  rec = h_->node(1).completions().record(1);
  EXPECT_EQ(rec.error, OpError::NoProgress);
  EXPECT_GT(h_->node(0).counters().tx_abandoned.get(), 0u);
  EXPECT_GT(h_->node(1).counters().rx_abandoned.get(), 0u);
  EXPECT_EQ(h_->node(1).counters().rx_out_of_window.get(), 0u);

  // The next broadcast goes through with the root's bytes.
  std::fill(b.begin(), b.end(), std::byte{0});
  ASSERT_TRUE(broadcast(a, b));
  EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size()));
}

}  // namespace
}  // namespace lanecast::engine

namespace lanecast::engine {
namespace {

// Streams' frames from the wire: a batch whose records do not fit its
// payload, one that miscounts them, one with a bad payload CRC, one naming
// the receiver itself as publisher, and reports from a member that is not a
// child - each dropped and counted, none delivered; then a well-formed batch
// is delivered, and a broadcast still runs.
TEST_F(HostileFrames, StreamFramesThatBreakTheFormatAreCounted) {
  const auto& c = h_->node(1).counters();
  std::vector<uint8_t> overrun, good;
  stream_record(overrun, 200, 200, 20);  // says 200 bytes, holds 20
  inject_stream_batch(0, 0, overrun, 1);
  stream_record(good, 10, 10, 10);
  inject_stream_batch(1, 0, good, 2);                   // claims two records, holds one
  inject_stream_batch(2, 0, good, 1, 0, /*crc_xor=*/1); // corrupt
  inject_stream_batch(3, 0, good, 1, /*root=*/1);       // "published by" the receiver itself
  inject(static_cast<uint16_t>(14 + wire::kDataHeaderBytes), [&](uint8_t* p) {  // a report from rank 0, its parent
    wire::DataBody b{};
    b.op = 0; b.root = 0; b.offset = 5; b.segment_bytes = kSeg;
    wire::write_data(p + 14, {kGroup, kEpoch, 0}, b, wire::kFlagStream | wire::kFlagSignal, wire::FrameType::Datagram);
  }, /*from=*/0);
  h_->run(50);
  EXPECT_EQ(c.streams.rx_stream_bad.get(), 4u);
  EXPECT_EQ(c.rx_malformed[static_cast<size_t>(wire::Verdict::BadPayloadCrc)].get(), 1u);
  EXPECT_EQ(c.streams.stream_msgs_delivered.get(), 0u);
  // Sequence numbers 0..3 were refused, so the channel still waits for seq 0:
  // the well-formed batch comes with it.
  inject_stream_batch(0, 0, good, 1);
  h_->run(50);
  EXPECT_EQ(c.streams.stream_msgs_delivered.get(), 1u);
  stream::RecordRing ring(h_->node(1).streams().delivery_ring());
  ASSERT_TRUE(ring.valid());
  const stream::RecordView r = ring.peek();
  ASSERT_NE(r.data, nullptr);
  stream::DeliveredHead dh;
  std::memcpy(&dh, r.data, sizeof dh);
  EXPECT_EQ(dh.seq, 0u);
  EXPECT_EQ(dh.publisher, 0u);
  EXPECT_EQ(dh.timestamp_ns, 1234u);
  EXPECT_EQ(r.len, sizeof dh + 10);
  ring.pop();
  // The same batch again under a new sequence number (a parent's copy
  // after a lost ack): acknowledged, counted, not delivered twice. And a
  // batch past the window: counted, not acknowledged.
  inject_stream_batch(1, 0, good, 1);
  inject_stream_batch(2, 5000, good, 1);
  h_->run(50);
  EXPECT_EQ(c.streams.rx_stream_duplicate.get(), 1u);
  EXPECT_EQ(c.streams.rx_stream_ahead.get(), 1u);
  EXPECT_EQ(c.streams.stream_msgs_delivered.get(), 1u);
  // Rank 1 still broadcasts (to rank 0: the channel from rank 0 carried the
  // forged sequence numbers, so rank 0's own first frames would be taken
  // for duplicates of them).
  std::vector<std::vector<std::byte>> bufs(2, std::vector<std::byte>(4 * kSeg));
  for (size_t i = 0; i < bufs[1].size(); ++i) bufs[1][i] = static_cast<std::byte>(i * 11);
  const auto recs = h_->broadcast(1, algos::Algo::Chain, bufs, 1'000'000);
  ASSERT_EQ(recs[0].error, OpError::None);
  ASSERT_EQ(recs[1].error, OpError::None);
  EXPECT_EQ(bufs[0], bufs[1]);
}


// A message in pieces whose pieces do not add up to its length, or whose
// flags disagree with the sum, is refused and counted - never copied past
// the message_len bytes delivery reserved for it. The orphaned later piece
// is counted too, and the stream goes on with the next message.
TEST_F(HostileFrames, StreamPiecesThatDisagreeWithTheMessageLengthAreRefused) {
  const auto& c = h_->node(1).counters();
  using stream::kContinuation;
  using stream::kMorePieces;
  struct Case {
    const char* what;
    uint32_t first, second, second_flags;
  };
  const Case cases[] = {
      {"400 bytes of a 300-byte message", 200, 200, kContinuation},
      {"the last piece leaves 100 bytes missing", 100, 100, kContinuation},
      {"the length is reached, yet more pieces are said to follow", 200, 100, kContinuation | kMorePieces},
  };
  uint32_t seq = 0, number = 0;
  for (const Case& k : cases) {
    std::vector<uint8_t> first, second;
    stream_record(first, k.first | kMorePieces, 300, k.first);
    stream_record(second, k.second | k.second_flags, 300, k.second);
    inject_stream_batch(seq++, number++, first, 1);
    inject_stream_batch(seq++, number++, second, 1);
  }
  std::vector<uint8_t> good;
  stream_record(good, 10, 10, 10);
  inject_stream_batch(seq++, number++, good, 1);
  h_->run(100);
  EXPECT_EQ(c.streams.stream_batches_rx.get(), 7u) << "every batch is well formed on its own";
  EXPECT_EQ(c.streams.stream_msgs_delivered.get(), 1u) << "only the well-formed message";
  EXPECT_EQ(c.streams.rx_stream_bad.get(), 6u) << "each refused message, and its orphaned piece";
  stream::RecordRing ring(h_->node(1).streams().delivery_ring());
  ASSERT_TRUE(ring.valid());
  const stream::RecordView r = ring.peek();
  ASSERT_NE(r.data, nullptr);
  EXPECT_EQ(r.len, sizeof(stream::DeliveredHead) + 10);
}

// The same attack on a member that delivers to a handler: pieces adding up
// to more than the largest message would be copied past the reassembly
// buffer (the ASan build reports it as a heap overflow).
TEST_F(HostileFrames, StreamPiecesPastTheLargestMessageNeverReachTheHandler) {
  const auto& c = h_->node(1).counters();
  uint32_t handled = 0;
  h_->node(1).streams().set_message_handler([&](const stream::DeliveredHead&, const uint8_t*, uint32_t) { ++handled; });
  const uint32_t len = static_cast<uint32_t>(h_->node(1).streams().max_message());
  constexpr uint32_t kPiece = kSeg - sizeof(stream::RecordHead);
  uint32_t sent = 0, seq = 0;
  while (sent <= len) {  // one piece more than the message holds
    std::vector<uint8_t> pay;
    const bool last = sent + kPiece > len;
    const uint32_t flags = (sent > 0 ? stream::kContinuation : 0) | (last ? 0 : stream::kMorePieces);
    stream_record(pay, kPiece | flags, len, kPiece);
    inject_stream_batch(seq, seq, pay, 1);
    ++seq;
    sent += kPiece;
    if (seq % 32 == 0) h_->run(20);
  }
  h_->run(100);
  EXPECT_EQ(handled, 0u);
  EXPECT_EQ(c.streams.stream_msgs_delivered.get(), 0u);
  EXPECT_GE(c.streams.rx_stream_bad.get(), 1u);
}

// Pieces where the publisher never puts them are refused on arrival (and
// not acknowledged): a piece that says more follow must end its batch, a
// continuation must start one, and neither may be empty.
TEST_F(HostileFrames, StreamPiecesOutOfPlaceAreRefusedOnArrival) {
  const auto& c = h_->node(1).counters();
  std::vector<uint8_t> more_then_other, other_then_continuation, empty_more;
  stream_record(more_then_other, 50 | stream::kMorePieces, 100, 50);
  stream_record(more_then_other, 10, 10, 10);
  stream_record(other_then_continuation, 10, 10, 10);
  stream_record(other_then_continuation, 50 | stream::kContinuation, 100, 50);
  stream_record(empty_more, 0 | stream::kMorePieces, 10, 0);
  inject_stream_batch(0, 0, more_then_other, 2);
  inject_stream_batch(0, 0, other_then_continuation, 2);
  inject_stream_batch(0, 0, empty_more, 1);
  h_->run(50);
  EXPECT_EQ(c.streams.rx_stream_bad.get(), 3u);
  EXPECT_EQ(c.streams.stream_batches_rx.get(), 0u);
  EXPECT_EQ(c.streams.stream_msgs_delivered.get(), 0u);
}
}  // namespace
}  // namespace lanecast::engine

namespace lanecast::engine {
namespace {

// A stream that cannot complete fails, naming the parent, instead of
// waiting at a gap for ever: the parent gave up (abandoned) a batch this
// member lacks, or a gap stays unfilled for the peer timeout while the
// channel is content. A batch given up that the member has, and a gap
// filled in time, change nothing.
TEST_F(HostileFrames, AStreamThatCannotCompleteFailsInsteadOfWaiting) {
  const Node& n = h_->node(1);
  std::vector<uint8_t> good;
  stream_record(good, 10, 10, 10);
  inject_stream_batch(0, 1, good, 1);  // batch 1 first: a gap at batch 0
  h_->run(20);
  h_->advance(1'000'000'000);          // half the peer timeout
  h_->run(20);
  inject_stream_batch(1, 0, good, 1);  // the gap filled in time
  h_->run(20);
  EXPECT_EQ(n.counters().streams.stream_msgs_delivered.get(), 2u);
  inject_given_up(2, 0);               // a batch it has: nothing
  h_->run(20);
  EXPECT_EQ(n.streams().error(), OpError::None);
  inject_stream_batch(3, 3, good, 1);  // a gap at batch 2 that nothing fills
  h_->run(20);
  h_->advance(1'500'000'000);
  h_->run(20);
  EXPECT_EQ(n.streams().error(), OpError::None) << "within the peer timeout";
  h_->advance(1'000'000'000);
  h_->run(20);
  EXPECT_EQ(n.counters().streams.stream_gap_timeouts.get(), 1u);
  EXPECT_EQ(n.streams().error(), OpError::NoProgress);
  EXPECT_EQ(n.streams().error_peer(), 0u);
}

TEST_F(HostileFrames, AStreamBatchTheParentGaveUpFailsTheStream) {
  const Node& n = h_->node(1);
  inject_given_up(0, 0);
  h_->run(20);
  EXPECT_EQ(n.counters().rx_abandoned.get(), 1u);
  EXPECT_EQ(n.counters().streams.rx_stream_given_up.get(), 1u);
  EXPECT_EQ(n.streams().error(), OpError::NoProgress);
  EXPECT_EQ(n.streams().error_peer(), 0u);
}

// A stream the application opens after the member's streams failed is told
// at once (Publisher::status(), publish() says Failed), naming the same
// peer: its messages would otherwise wait in its ring for a core that never
// sends them, and publish() say Ok until the window filled - a silent
// stall. Found by tests/fuzz/stream_fuzz (the given-up batch came in the
// publishing member's first turn, before its core took the publisher).
TEST_F(HostileFrames, AStreamOpenedAfterTheStreamsFailedIsTold) {
  Node& n = h_->node(1);
  inject_given_up(0, 0);
  h_->run(20);
  ASSERT_EQ(n.streams().error(), OpError::NoProgress);
  auto pub = publisher(0);
  const stream::PublisherShared* shared = pub.get();  // the node owns it from here
  ASSERT_TRUE(n.open_publisher(std::move(pub)));
  h_->run(20);
  EXPECT_EQ(static_cast<OpError>(shared->error.load()), OpError::NoProgress);
  EXPECT_EQ(shared->error_peer.load(), 0u);
}

// Three members in a chain (0 -> 1 -> 2): rank 0 is not rank 2's parent in
// rank 0's stream. Stream frames from a member that is not the stream's
// parent, or naming a stream no member may publish, are refused before
// anything is kept for them - not even the stream's slot - so no member (or
// forger) can use up another member's slots; the real stream still runs.
class HostileStreamFrames : public HostileFrames {
 protected:
  void SetUp() override {
    test::NodeHarness::Options o = hostile_options();
    o.nodes = 3;
    o.node.streams.fanout = 1;
    o.node.streams.streams_per_member = 2;
    h_ = std::make_unique<test::NodeHarness>(o);
  }
};

TEST_F(HostileStreamFrames, FramesFromOutsideTheTreeTakeNoSlot) {
  const Node& victim = h_->node(2);
  std::vector<uint8_t> good;
  stream_record(good, 10, 10, 10);
  for (uint32_t stream = 0; stream < 2; ++stream)  // rank 0's own streams, sent past rank 1
    inject_stream_batch(stream, 0, good, 1, /*root=*/0, 0, /*to=*/2, stream);
  inject_stream_batch(2, 0, good, 1, /*root=*/0, 0, /*to=*/2, /*stream=*/2);     // no such stream
  inject_stream_batch(3, 0, good, 1, /*root=*/0, 0, /*to=*/2, /*stream=*/60000); // nor this
  h_->run(50);
  EXPECT_EQ(victim.counters().streams.rx_stream_bad.get(), 4u);
  for (size_t i = 0; i < victim.streams().slots(); ++i) EXPECT_EQ(victim.streams().mirror(i), nullptr) << "slot " << i;
  // Rank 0's real stream 1 reaches rank 2 through rank 1.
  auto pub = publisher(1);
  stream::RecordRing ring(pub->ring);
  const uint64_t stamp = 77;
  uint8_t* at = ring.reserve(8 + 5, 0);
  ASSERT_NE(at, nullptr);
  std::memcpy(at, &stamp, 8);
  std::memcpy(at + 8, "hello", 5);
  ring.commit();
  ASSERT_TRUE(h_->node(0).open_publisher(std::move(pub)));
  h_->run(200);
  EXPECT_EQ(victim.counters().streams.stream_msgs_delivered.get(), 1u);
  EXPECT_NE(victim.streams().mirror(0 * 2 + 1), nullptr);
}

// A member whose streams fail tells each stream's parent, whose streams
// then fail too and tell theirs, up to the publisher: a parent whose batches
// were all acknowledged has nothing in flight to time out on, and would wait
// for its child's reports for ever - its publisher's last messages never
// stable, Publisher::status() fine, publish() saying Ok until the window
// filled: a silent stall. Chain 0 -> 1 -> 2: rank 1 gives rank 2 up a batch
// rank 2 lacks. Found by tests/fuzz/stream_fuzz.
TEST_F(HostileStreamFrames, AMemberWhoseStreamsFailedTellsItsParents) {
  auto pub = publisher(0);
  stream::PublisherShared* shared = pub.get();  // the node owns it from here
  stream::RecordRing ring(shared->ring);
  const auto publish = [&](uint64_t stamp) {
    uint8_t* at = ring.reserve(8 + 5, 0);
    ASSERT_NE(at, nullptr);
    std::memcpy(at, &stamp, 8);
    std::memcpy(at + 8, "hello", 5);
    ring.commit();
  };
  publish(1);
  ASSERT_TRUE(h_->node(0).open_publisher(std::move(pub)));
  h_->run(300);
  ASSERT_EQ(h_->node(2).counters().streams.stream_msgs_delivered.get(), 1u);
  ASSERT_EQ(shared->stable_msgs.load(), 1u);
  // Rank 1 (its port, its channel's next sequence number) gives up batch 1.
  inject(static_cast<uint16_t>(14 + wire::kDataHeaderBytes), [&](uint8_t* p) {
    wire::DataBody b{};
    b.op = 0; b.root = 0; b.seq = 1; b.segment = 1; b.segment_bytes = kSeg;
    wire::write_data(p + 14, {kGroup, kEpoch, 1}, b, wire::kFlagAbandoned | wire::kFlagStream);
  }, /*from=*/1, /*to=*/2);
  publish(2);  // batch 1: rank 2 refuses it
  for (int i = 0; i < 100 && shared->error.load() == 0; ++i) h_->run(10, 10'000'000);  // up to 10 s
  EXPECT_EQ(h_->node(2).streams().error(), OpError::NoProgress);
  EXPECT_EQ(h_->node(2).streams().error_peer(), 1u);
  EXPECT_EQ(h_->node(1).streams().error_peer(), 2u);
  EXPECT_EQ(static_cast<OpError>(shared->error.load()), OpError::NoProgress) << "the publisher was never told";
  EXPECT_EQ(shared->error_peer.load(), 1u);
  EXPECT_EQ(shared->stable_msgs.load(), 1u);
  EXPECT_GE(h_->node(1).counters().streams.rx_stream_child_failed.get(), 1u);
  EXPECT_GE(h_->node(0).counters().streams.rx_stream_child_failed.get(), 1u);
}

// A member whose streams failed before it held anything of a stream tells
// the parent that sends it one of its batches, at once: without it the
// parent learned only from its acknowledgement timeout (the peer timeout,
// 2 s here), and not at all while the batches it sent were ones it had let
// go (sent again empty, acknowledged).
TEST_F(HostileFrames, AFailedMemberTellsAParentThatSendsItABatch) {
  inject_given_up(100, 5);  // rank 1's streams fail; a sequence number rank 0's own frames do not reach
  h_->run(20);
  ASSERT_EQ(h_->node(1).streams().error(), OpError::NoProgress);
  auto pub = publisher(0);
  stream::PublisherShared* shared = pub.get();  // the node owns it from here
  stream::RecordRing ring(shared->ring);
  ASSERT_NO_FATAL_FAILURE(publish_filled(ring, 5, 0x44));
  ASSERT_TRUE(h_->node(0).open_publisher(std::move(pub)));
  h_->run(100);  // 100 us
  EXPECT_EQ(static_cast<OpError>(shared->error.load()), OpError::NoProgress);
  EXPECT_EQ(shared->error_peer.load(), 1u);
  EXPECT_GE(h_->node(0).counters().streams.rx_stream_child_failed.get(), 1u);
}

// A report that says a child's subtree delivered batches its parent never
// sent it (forged from the child's address) is refused: the parent would
// let them go while still owed to that child. When the message ended there
// the child had no later batch to show it a gap and waited for the rest
// unaware, the publisher told nothing: a silent stall (found by
// tests/fuzz/stream_fuzz, its input now a corpus seed,
// found_silent_stall_d80e2e1e; an earlier finding had a batch owed behind
// the ones let go, which the child met as a gap). Now the forgery is counted
// and the stream goes on whole.
TEST_F(HostileFrames, AReportPastWhatWasSentToTheChildIsRefused) {
  test::NodeHarness::Options o = hostile_options();
  o.node.window = 4;  // rank 0 sends 4 batches; the rest of the message waits, owed
  h_ = std::make_unique<test::NodeHarness>(o);
  auto pub = publisher(0);
  stream::PublisherShared* shared = pub.get();  // the node owns it from here
  stream::RecordRing ring(shared->ring);
  ASSERT_NO_FATAL_FAILURE(publish_filled(ring, 20 * kSeg, 0x33));  // 22 batches, the stream's last message
  ASSERT_TRUE(h_->node(0).open_publisher(std::move(pub)));
  h_->step();
  h_->step();
  ASSERT_LT(h_->node(0).counters().streams.stream_batches_tx.get(), 22u);
  // "Rank 1 delivered the first 22": sent from rank 1's port.
  inject(static_cast<uint16_t>(14 + wire::kDataHeaderBytes), [&](uint8_t* p) {
    wire::DataBody b{};
    b.op = 0; b.root = 0; b.offset = 22; b.segment = 1; b.segment_bytes = kSeg;
    wire::write_data(p + 14, {kGroup, kEpoch, 1}, b, wire::kFlagStream | wire::kFlagSignal, wire::FrameType::Datagram);
  }, /*from=*/1, /*to=*/0);
  for (int i = 0; i < 100 && shared->stable_msgs.load() == 0 && shared->error.load() == 0; ++i)
    h_->run(10, 1'000'000);  // up to a second
  EXPECT_EQ(h_->node(0).counters().streams.rx_stream_bad.get(), 1u) << "the forged report was taken";
  EXPECT_EQ(h_->node(1).counters().streams.stream_msgs_delivered.get(), 1u) << "the message never arrived whole";
  EXPECT_EQ(h_->node(1).counters().streams.stream_batches_rx.get(), 22u);
  EXPECT_EQ(shared->stable_msgs.load(), 1u);
  EXPECT_EQ(shared->error.load(), 0u);
}

// Over multicast the publisher cannot tell what a member got from the group
// address: a report forged from the member's address may say it has the
// stream's last batch, lost on its way there, and the publisher lets it go
// instead of repairing it. The member's reports then say it lacks a batch
// let go (rx_stream_contradicted) - which its own reports, moving only
// forward, cannot keep saying for 5 ms - and the publisher's stream fails
// naming it instead of the member waiting for the batch unheard.
TEST_F(HostileFrames, OverMulticastAMemberThatLacksABatchLetGoForAForgedReportFailsTheStream) {
  test::NodeHarness::Options o = hostile_options();
  o.node.streams.multicast = true;
  test::DroppingPort* dropper = nullptr;  // rank 1 loses batch 1 from the group address
  o.wrap = [&](uint32_t rank, drivers::Port& inner) -> std::unique_ptr<drivers::Port> {
    if (rank != 1) return nullptr;
    auto d = std::make_unique<test::DroppingPort>(inner, [](const wire::Parsed& p, uint32_t) {
      return p.type == wire::FrameType::Datagram && (p.flags & wire::kFlagStream) && p.data.payload_len > 0 &&
             p.data.segment == 1;
    });
    dropper = d.get();
    return d;
  };
  h_ = std::make_unique<test::NodeHarness>(o);
  auto pub = publisher(0);
  stream::PublisherShared* shared = pub.get();  // the node owns it from here
  stream::RecordRing ring(shared->ring);
  ASSERT_NO_FATAL_FAILURE(publish_filled(ring, 100, 0x44));
  ASSERT_TRUE(h_->node(0).open_publisher(std::move(pub)));
  h_->run(100);  // batch 0 arrives and is reported held
  ASSERT_EQ(h_->node(1).counters().streams.stream_msgs_delivered.get(), 1u);
  ASSERT_NO_FATAL_FAILURE(publish_filled(ring, 100, 0x44));
  h_->run(3);  // batch 1 goes to the group address, and is lost at rank 1
  ASSERT_EQ(h_->node(0).counters().streams.stream_multicasts_tx.get(), 2u);
  ASSERT_EQ(dropper->dropped(), 1u);
  // "Rank 1 delivered both", from rank 1's port, before the publisher repairs.
  inject(static_cast<uint16_t>(14 + wire::kDataHeaderBytes), [&](uint8_t* p) {
    wire::DataBody b{};
    b.op = 0; b.root = 0; b.offset = 2; b.total_len = 2; b.segment = 1; b.segment_bytes = kSeg;
    wire::write_data(p + 14, {kGroup, kEpoch, 1}, b, wire::kFlagStream | wire::kFlagSignal, wire::FrameType::Datagram);
  }, /*from=*/1, /*to=*/0);
  for (int i = 0; i < 100 && shared->error.load() == 0; ++i) h_->run(10, 1'000'000);  // up to a second
  EXPECT_EQ(h_->node(1).counters().streams.stream_msgs_delivered.get(), 1u);
  EXPECT_GE(h_->node(0).counters().streams.rx_stream_contradicted.get(), 1u);
  EXPECT_EQ(static_cast<OpError>(shared->error.load()), OpError::NoProgress) << "nobody said why rank 1 stopped";
  EXPECT_EQ(shared->error_peer.load(), 1u);
}

// Rings and windows may be 16 GiB, and a group's messages 4 GiB; a stream's
// message stays below 2 GiB so that its length with the heads in front of
// it fits the rings' and the wire's 32-bit record lengths (never truncated).
// With the largest segment and window of frames, what the window holds is
// the bound, and it is below that.
TEST(StreamLimits, AStreamMessageFitsA32BitRecordWhateverTheWindows) {
  test::NodeHarness::Options o = hostile_options();
  o.node.segment_bytes = 9000;
  o.fabric.max_frame_bytes = 9200;
  o.node.max_message_bytes = uint64_t{4} << 30;
  o.node.streams.window_batches = 65536;
  o.node.streams.window_bytes = uint64_t{1} << 34;
  o.node.streams.delivery_bytes = uint64_t{1} << 34;
  test::NodeHarness h(o);
  EXPECT_EQ(h.node(1).streams().max_message(), uint64_t{65536 - 2} * (9000 - sizeof(stream::RecordHead)));
  EXPECT_LE(h.node(1).streams().max_message(), Node::kMaxStreamMessage);
  EXPECT_LE(Node::kMaxStreamMessage + sizeof(stream::DeliveredHead) + 8, uint64_t{UINT32_MAX});
}

}  // namespace
}  // namespace lanecast::engine
