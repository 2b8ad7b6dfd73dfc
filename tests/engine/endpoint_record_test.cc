// Endpoint records (engine/bootstrap/endpoint_record.h): what one member puts
// in a launcher's key-value store and every other member reads back. Bytes
// from another process are untrusted: every malformed record is refused
// with its own reason, and no input - truncated, mutated, random - crashes.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <string>
#include <variant>

#include "engine/bootstrap/endpoint_record.h"

namespace lanecast::engine::bootstrap {
namespace {

uint64_t test_seed() {
  if (const char* s = std::getenv("LANECAST_SEED")) return std::strtoull(s, nullptr, 10);
  return 20260517;
}

drivers::PeerAddress mac(uint8_t last) {
  drivers::PeerAddress a;
  a.len = 6;
  const uint8_t b[6] = {2, 0, 0, 1, 0, last};
  std::copy(b, b + 6, a.bytes);
  return a;
}

EndpointRecord sample(uint16_t lanes = 2) {
  EndpointRecord r;
  r.endpoint.rank = 513;
  r.endpoint.incarnation = 0x0123456789ABCDEFULL;
  for (uint16_t l = 0; l < lanes; ++l) r.endpoint.lanes.push_back(mac(static_cast<uint8_t>(7 + l)));
  r.spec_digest = 0xFEDCBA9876543210ULL;
  return r;
}

std::string refusal(const std::vector<uint8_t>& bytes) {
  auto d = decode_record(bytes);
  if (std::holds_alternative<EndpointRecord>(d)) return "(accepted)";
  return std::get<std::string>(d);
}

TEST(EndpointRecord, RoundTrip) {
  for (uint16_t lanes = 1; lanes <= kRecordMaxLanes; ++lanes) {
    const EndpointRecord in = sample(lanes);
    auto out = decode_record(encode_record(in));
    ASSERT_TRUE(std::holds_alternative<EndpointRecord>(out)) << std::get<std::string>(out);
    const EndpointRecord& r = std::get<EndpointRecord>(out);
    EXPECT_EQ(r.endpoint.rank, in.endpoint.rank);
    EXPECT_EQ(r.endpoint.incarnation, in.endpoint.incarnation);
    EXPECT_EQ(r.spec_digest, in.spec_digest);
    ASSERT_EQ(r.endpoint.lanes.size(), lanes);
    for (uint16_t l = 0; l < lanes; ++l) EXPECT_TRUE(r.endpoint.lanes[l] == in.endpoint.lanes[l]);
  }
}

// The layout is a promise between builds: pin it.
TEST(EndpointRecord, LittleEndianLayout) {
  const std::vector<uint8_t> b = encode_record(sample(1));
  ASSERT_EQ(b.size(), 28u + 1 + 6);
  EXPECT_EQ(std::string(b.begin(), b.begin() + 4), "LCEP");
  EXPECT_EQ(b[4], kRecordVersion);  // version, low byte first
  EXPECT_EQ(b[5], 0);
  EXPECT_EQ(b[6], 1);               // lanes
  EXPECT_EQ(b[8], 513 & 0xFF);      // rank
  EXPECT_EQ(b[9], 513 >> 8);
  EXPECT_EQ(b[12], 0xEF);           // incarnation, low byte first
  EXPECT_EQ(b[20], 0x10);           // digest, low byte first
  EXPECT_EQ(b[28], 6);              // lane 0: a 6-byte address
  EXPECT_EQ(b[34], 7);
}

TEST(EndpointRecord, EveryTruncationIsRefused) {
  const std::vector<uint8_t> whole = encode_record(sample(2));
  for (size_t n = 0; n < whole.size(); ++n) {
    SCOPED_TRACE(n);
    const std::vector<uint8_t> cut(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(n));
    const std::string why = refusal(cut);
    EXPECT_NE(why, "(accepted)");
    if (n < 28) EXPECT_NE(why.find("shorter than a record's 28"), std::string::npos) << why;
    else EXPECT_NE(why.find("ends "), std::string::npos) << why;
  }
}

TEST(EndpointRecord, EachBadFieldHasItsReason) {
  const std::vector<uint8_t> good = encode_record(sample(1));
  auto with = [&](size_t at, uint8_t v) {
    std::vector<uint8_t> b = good;
    b[at] = v;
    return refusal(b);
  };
  EXPECT_NE(with(0, 'X').find("not a lanecast endpoint record"), std::string::npos);
  EXPECT_NE(with(4, 2).find("record version 2 (this lanecast reads version 1"), std::string::npos);
  EXPECT_NE(with(6, 0).find("0 lanes"), std::string::npos);
  EXPECT_NE(with(6, 5).find("5 lanes (1..4 allowed)"), std::string::npos);
  EXPECT_NE(with(28, 0).find("lane 0's address is 0 bytes"), std::string::npos);
  EXPECT_NE(with(28, 41).find("lane 0's address is 41 bytes"), std::string::npos);
  EXPECT_NE(with(28, 7).find("ends inside lane 0's address"), std::string::npos);
  std::vector<uint8_t> longer = good;
  longer.push_back(0);
  EXPECT_NE(refusal(longer).find("1 bytes after the last lane"), std::string::npos);
}

// Whatever a store hands back: no crash, no read past the bytes (ASan), and
// anything accepted says exactly what encoding it would give again.
TEST(EndpointRecord, MutatedAndRandomBytesNeverCrash) {
  const uint64_t seed = test_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (LANECAST_SEED replays)");
  std::mt19937_64 rng(seed);
  const std::vector<uint8_t> good = encode_record(sample(3));
  size_t accepted = 0;
  for (int i = 0; i < 20000; ++i) {
    std::vector<uint8_t> b;
    if (i % 2 == 0) {
      b = good;
      const int flips = 1 + static_cast<int>(rng() % 4);
      for (int f = 0; f < flips; ++f) b[rng() % b.size()] = static_cast<uint8_t>(rng());
      if (rng() % 4 == 0) b.resize(rng() % (b.size() + 8));
    } else {
      b.resize(rng() % 80);
      for (uint8_t& x : b) x = static_cast<uint8_t>(rng());
    }
    auto d = decode_record(b);
    if (const auto* r = std::get_if<EndpointRecord>(&d)) {
      ++accepted;
      EXPECT_EQ(encode_record(*r), b);
    }
  }
  EXPECT_GT(accepted, 0u);  // flips of the rank, incarnation or digest still decode
}

}  // namespace
}  // namespace lanecast::engine::bootstrap
