// Frame parsing: every malformed frame is rejected with its own reason.
#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <cstring>

#include "engine/checksum/crc32c.h"
#include "engine/wire/stream_body.h"
#include "engine/wire/wire.h"
#include "tests/engine/eal_env.h"

namespace lanecast::engine::wire {
namespace {

constexpr uint16_t kLink = 14;

class Wire : public ::testing::Test {
 protected:
  void SetUp() override { pool_ = test::test_pool("wire_test"); ASSERT_NE(pool_, nullptr); }

  rte_mbuf* data_frame(uint32_t payload_len, uint8_t fill = 0xAB) {
    rte_mbuf* m = rte_pktmbuf_alloc(pool_);
    auto* p = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, kLink + kDataHeaderBytes + payload_len));
    std::memset(p, 0, kLink);
    std::memset(p + kLink + kDataHeaderBytes, fill, payload_len);
    DataBody b{};
    b.op = 3; b.root = 1; b.seq = 42; b.segment = 5; b.offset = 5 * 1000; b.total_len = 123456;
    b.payload_len = payload_len;
    b.payload_crc = crc32c(0, p + kLink + kDataHeaderBytes, payload_len);
    b.segment_bytes = 1000; b.algo = 3;
    write_data(p + kLink, {77, 0xE0C4u, 2}, b);
    return m;
  }
  rte_mempool* pool_ = nullptr;
};

TEST(Crc32c, KnownAnswer) {
  // RFC 3720 B.4: 32 bytes of zeros -> 0x8A9136AA.
  uint8_t zeros[32] = {};
  EXPECT_EQ(crc32c(0, zeros, sizeof zeros), 0x8A9136AAu);
  const char* s = "123456789";
  EXPECT_EQ(crc32c(0, s, 9), 0xE3069283u);
}

TEST_F(Wire, RoundTripData) {
  rte_mbuf* m = data_frame(1000);
  Parsed p;
  ASSERT_EQ(parse(m, kLink, &p), Verdict::Ok);
  EXPECT_EQ(p.type, FrameType::Data);
  EXPECT_EQ(p.group, 77u);
  EXPECT_EQ(p.epoch, 0xE0C4u);
  EXPECT_EQ(p.src, 2u);
  EXPECT_EQ(p.data.op, 3u);
  EXPECT_EQ(p.data.seq, 42u);
  EXPECT_EQ(p.data.segment, 5u);
  EXPECT_EQ(p.data.offset, 5000u);
  EXPECT_EQ(p.data.total_len, 123456u);
  EXPECT_EQ(p.payload_offset, kLink + kDataHeaderBytes);
  rte_pktmbuf_free(m);
}

TEST_F(Wire, RoundTripDatagram) {
  rte_mbuf* m = data_frame(300);
  DataBody b{};
  b.op = 4; b.root = 0; b.segment = 7; b.offset = 7000; b.total_len = 9000; b.payload_len = 300;
  b.payload_crc = crc32c(0, rte_pktmbuf_mtod_offset(m, uint8_t*, kLink + kDataHeaderBytes), 300);
  b.segment_bytes = 1000; b.algo = 10; b.lane = 1;
  write_data(rte_pktmbuf_mtod_offset(m, uint8_t*, kLink), {77, 1, 0}, b, 0, FrameType::Datagram);
  Parsed p;
  ASSERT_EQ(parse(m, kLink, &p), Verdict::Ok);
  EXPECT_EQ(p.type, FrameType::Datagram);
  EXPECT_EQ(p.data.segment, 7u);
  EXPECT_EQ(p.data.lane, 1u);
  EXPECT_TRUE(payload_crc_ok(m, p));
  rte_pktmbuf_free(m);
}

// A stream's bodies keep a data body's bytes on the wire: each field comes
// back where it was written, through parse()'s byte-order conversion, with
// values that use every bit of its width.
TEST_F(Wire, RoundTripStreamBodies) {
  rte_mbuf* m = data_frame(200);
  uint8_t* at = rte_pktmbuf_mtod_offset(m, uint8_t*, kLink);
  const uint32_t crc = crc32c(0, at + kDataHeaderBytes, 200);

  StreamBatch b{};
  b.stream = 0x01020304; b.publisher = 5; b.seq = 0xA1B2C3D4; b.batch_low = 0xFFFFFFFE;
  b.first_msg = 0x1122334455667788; b.records = 0x0000000100000002; b.payload_len = 200; b.payload_crc = crc;
  b.segment_bytes = 1400; b.lane = 1;
  write_stream(at, {77, 9, 2}, b, 0, FrameType::Data);
  Parsed p;
  ASSERT_EQ(parse(m, kLink, &p), Verdict::Ok);
  EXPECT_EQ(p.flags & kFlagStream, kFlagStream);
  const StreamBatch got = stream_body<StreamBatch>(p);
  EXPECT_EQ(std::memcmp(&got, &b, sizeof b), 0);
  EXPECT_EQ(p.data.segment, 0xFFFFFFFEu);  // the same bytes, read as a data body
  EXPECT_TRUE(payload_crc_ok(m, p));

  StreamReport r{};
  r.stream = 2; r.publisher = 3; r.gap = 17; r.slowest = 6; r.delivered = 0xDEADBEEF00000001; r.held = 0x42;
  r.payload_len = 200; r.payload_crc = crc; r.segment_bytes = 1400;
  write_stream(at, {77, 9, 4}, r, kFlagSignal, FrameType::Datagram);
  ASSERT_EQ(parse(m, kLink, &p), Verdict::Ok);
  EXPECT_EQ(p.flags, kFlagStream | kFlagSignal);
  const StreamReport gr = stream_body<StreamReport>(p);
  EXPECT_EQ(std::memcmp(&gr, &r, sizeof r), 0);

  StreamEviction e{};
  e.stream = 1; e.publisher = 0; e.member = 4; e.payload_len = 200; e.payload_crc = crc; e.segment_bytes = 1400;
  write_stream(at, {77, 9, 4}, e, kFlagSignal | kFlagEvicted, FrameType::Datagram);
  ASSERT_EQ(parse(m, kLink, &p), Verdict::Ok);
  EXPECT_EQ(stream_body<StreamEviction>(p).member, 4u);
  rte_pktmbuf_free(m);
}

TEST_F(Wire, RoundTripAck) {
  rte_mbuf* m = rte_pktmbuf_alloc(pool_);
  auto* p = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, kLink + kAckHeaderBytes));
  AckBody a{};
  a.cum_ack = 99;
  a.lane = 3;
  a.sack[0] = 0x5;
  a.sack[1] = 1ull << 63;
  a.newest_seq = 0xfffffffe;
  a.newest_rx_ns = 0x0123456789abcdefull;
  write_ack(p + kLink, {9, 2, 4}, a);
  Parsed out;
  ASSERT_EQ(parse(m, kLink, &out), Verdict::Ok);
  EXPECT_EQ(out.type, FrameType::Ack);
  EXPECT_EQ(out.ack.cum_ack, 99u);
  EXPECT_EQ(out.ack.lane, 3u);
  EXPECT_EQ(out.ack.sack[0], 0x5u);
  EXPECT_EQ(out.ack.sack[1], 1ull << 63);
  EXPECT_EQ(out.ack.newest_seq, 0xfffffffeu);
  EXPECT_EQ(out.ack.newest_rx_ns, 0x0123456789abcdefull);
  rte_pktmbuf_free(m);
}

TEST_F(Wire, RejectsEveryCorruption) {
  struct Case { const char* what; uint32_t offset; Verdict expect; };
  const Case cases[] = {
      {"version", kLink + 0, Verdict::BadVersion},
      {"type", kLink + 1, Verdict::BadType},
      {"group", kLink + 4, Verdict::BadHeaderCrc},
      {"epoch", kLink + 12, Verdict::BadHeaderCrc},
      {"reserved", kLink + 20, Verdict::BadHeaderCrc},
      {"segment", kLink + sizeof(FrameHeader) + 12, Verdict::BadHeaderCrc},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    rte_mbuf* m = data_frame(200);
    rte_pktmbuf_mtod(m, uint8_t*)[c.offset] ^= 0x40;
    Parsed p;
    EXPECT_EQ(parse(m, kLink, &p), c.expect);
    rte_pktmbuf_free(m);
  }
  // The payload's CRC is the receiver's to check while it copies the bytes
  // (node_rx.cc); parse() leaves it, payload_crc_ok() checks it alone.
  rte_mbuf* m = data_frame(200);
  Parsed p;
  ASSERT_EQ(parse(m, kLink, &p), Verdict::Ok);
  EXPECT_TRUE(payload_crc_ok(m, p));
  rte_pktmbuf_mtod(m, uint8_t*)[kLink + kDataHeaderBytes + 10] ^= 0x40;
  ASSERT_EQ(parse(m, kLink, &p), Verdict::Ok);
  EXPECT_FALSE(payload_crc_ok(m, p));
  rte_pktmbuf_free(m);
}

TEST_F(Wire, RejectsTruncatedAndPaddedFrames) {
  for (uint32_t cut : {1u, 100u, 199u}) {
    rte_mbuf* m = data_frame(200);
    rte_pktmbuf_trim(m, static_cast<uint16_t>(cut));
    Parsed p;
    EXPECT_EQ(parse(m, kLink, &p), Verdict::BadLength) << "cut " << cut;
    rte_pktmbuf_free(m);
  }
  rte_mbuf* m = data_frame(200);
  rte_pktmbuf_append(m, 7);
  Parsed p;
  EXPECT_EQ(parse(m, kLink, &p), Verdict::BadLength);
  rte_pktmbuf_free(m);
  for (uint16_t len : {0, 5, 14, 20, 29}) {
    rte_mbuf* s = rte_pktmbuf_alloc(pool_);
    std::memset(rte_pktmbuf_append(s, len ? len : 1), 1, len ? len : 1);
    if (len == 0) rte_pktmbuf_trim(s, 1);
    EXPECT_NE(parse(s, kLink, &p), Verdict::Ok) << "len " << len;
    rte_pktmbuf_free(s);
  }
}

TEST_F(Wire, ChainedPayloadIsChecked) {
  // Header in one mbuf, payload in the next: how zero-copy forwards look.
  rte_mbuf* whole = data_frame(300, 0x11);
  rte_mbuf* h = rte_pktmbuf_alloc(pool_);
  std::memcpy(rte_pktmbuf_append(h, kLink + kDataHeaderBytes), rte_pktmbuf_mtod(whole, void*),
              kLink + kDataHeaderBytes);
  rte_mbuf* pay = rte_pktmbuf_alloc(pool_);
  std::memset(rte_pktmbuf_append(pay, 300), 0x11, 300);
  ASSERT_EQ(rte_pktmbuf_chain(h, pay), 0);
  Parsed p;
  ASSERT_EQ(parse(h, kLink, &p), Verdict::Ok);
  EXPECT_TRUE(payload_crc_ok(h, p));
  rte_pktmbuf_mtod(pay, uint8_t*)[299] ^= 1;
  ASSERT_EQ(parse(h, kLink, &p), Verdict::Ok);
  EXPECT_FALSE(payload_crc_ok(h, p));
  rte_pktmbuf_free(h);
  rte_pktmbuf_free(whole);
}

TEST_F(Wire, RandomBytesNeverParse) {
  uint64_t x = 0x1234567;
  for (int i = 0; i < 2000; ++i) {
    rte_mbuf* m = rte_pktmbuf_alloc(pool_);
    const uint16_t len = static_cast<uint16_t>(x % 1500);
    auto* p = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, len ? len : 1));
    for (uint16_t k = 0; k < len; ++k) {
      x ^= x << 13; x ^= x >> 7; x ^= x << 17;
      p[k] = static_cast<uint8_t>(x);
    }
    if (len > kLink) p[kLink] = kVersion;  // get past the version check often
    Parsed out;
    EXPECT_NE(parse(m, kLink, &out), Verdict::Ok);
    rte_pktmbuf_free(m);
  }
}

}  // namespace
}  // namespace lanecast::engine::wire
