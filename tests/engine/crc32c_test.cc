// CRC-32C: every implementation this CPU has, held to a bit-at-a-time reference
// over every length to 4 KiB and random lengths to 64 KiB, at random source and
// destination alignments, continuing from nonzero CRCs; the fused copy writes
// exactly its bytes; the mbuf walkers over chains, offsets and short chains.
#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ostream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/checksum/crc32c.h"
#include "engine/checksum/crc32c_mbuf.h"
#include "engine/checksum/crc32c_paths.h"
#include "tests/engine/eal_env.h"

namespace lanecast::engine {

// Names the path in gtest's messages (found by argument-dependent lookup).
void PrintTo(Crc32cPath path, std::ostream* os) { *os << crc32c_path_name(path); }

namespace {

// The definition, one bit at a time: nothing shared with the code under test.
uint32_t reference_crc(uint32_t crc, const uint8_t* p, size_t len) {
  crc = ~crc;
  for (size_t i = 0; i < len; ++i) {
    crc ^= p[i];
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1u) != 0 ? 0x82F63B78u : 0u);
  }
  return ~crc;
}

uint64_t test_seed() {
  static const uint64_t seed = [] {
    const char* s = std::getenv("LANECAST_SEED");
    const uint64_t v = s != nullptr ? std::strtoull(s, nullptr, 10) : 20261122;
    std::printf("crc32c_test seed %llu (LANECAST_SEED=<n> replays)\n", static_cast<unsigned long long>(v));
    return v;
  }();
  return seed;
}

std::vector<uint8_t> random_bytes(size_t n, std::mt19937_64& rng) {
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(rng());
  return v;
}

constexpr uint8_t kGuard = 0xA5;
constexpr size_t kGuardBytes = 64;

class Crc32cPathTest : public ::testing::TestWithParam<Crc32cPath> {
 protected:
  void SetUp() override {
    if (!crc32c_available(GetParam())) GTEST_SKIP() << crc32c_path_name(GetParam()) << " not on this CPU";
  }

  // Checks crc32c_with and crc32c_copy_with over src[0, len) from `crc`, with
  // the copy landing `dst_shift` bytes into a guarded buffer.
  void check(uint32_t crc, const uint8_t* src, size_t len, size_t dst_shift) {
    const uint32_t want = reference_crc(crc, src, len);
    ASSERT_EQ(crc32c_with(GetParam(), crc, src, len), want) << "len " << len << " crc " << crc;

    std::vector<uint8_t> out(kGuardBytes + dst_shift + len + kGuardBytes, kGuard);
    uint8_t* dst = out.data() + kGuardBytes + dst_shift;
    ASSERT_EQ(crc32c_copy_with(GetParam(), crc, dst, src, len), want) << "copy, len " << len << " crc " << crc;
    ASSERT_EQ(std::memcmp(dst, src, len), 0) << "copy, len " << len;
    for (size_t i = 0; i < kGuardBytes + dst_shift; ++i)
      ASSERT_EQ(out[i], kGuard) << "wrote before dst, len " << len;
    for (size_t i = kGuardBytes + dst_shift + len; i < out.size(); ++i)
      ASSERT_EQ(out[i], kGuard) << "wrote past dst + len, len " << len;
  }
};

TEST_P(Crc32cPathTest, KnownAnswers) {
  const auto path = GetParam();
  EXPECT_EQ(crc32c_with(path, 0, "123456789", 9), 0xE3069283u);
  // RFC 3720 B.4.
  uint8_t b[32];
  std::memset(b, 0, sizeof b);
  EXPECT_EQ(crc32c_with(path, 0, b, sizeof b), 0x8A9136AAu);
  std::memset(b, 0xff, sizeof b);
  EXPECT_EQ(crc32c_with(path, 0, b, sizeof b), 0x62A8AB43u);
  for (int i = 0; i < 32; ++i) b[i] = static_cast<uint8_t>(i);
  EXPECT_EQ(crc32c_with(path, 0, b, sizeof b), 0x46DD794Eu);
  for (int i = 0; i < 32; ++i) b[i] = static_cast<uint8_t>(31 - i);
  EXPECT_EQ(crc32c_with(path, 0, b, sizeof b), 0x113FDB5Cu);
}

TEST_P(Crc32cPathTest, EveryLengthTo4KiB) {
  const uint64_t seed = test_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const auto data = random_bytes(4096 + 64, rng);
  for (size_t len = 0; len <= 4096; ++len) {
    const size_t src_shift = rng() % 64;
    const uint32_t crc = (len % 2 == 0) ? 0 : static_cast<uint32_t>(rng());
    check(crc, data.data() + src_shift, len, rng() % 64);
    if (HasFatalFailure()) return;
  }
}

TEST_P(Crc32cPathTest, RandomLengthsTo64KiB) {
  const uint64_t seed = test_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed + 1);
  const auto data = random_bytes((64 << 10) + 64, rng);
  for (int i = 0; i < 300; ++i) {
    const size_t len = rng() % ((64 << 10) + 1);
    check(static_cast<uint32_t>(rng()), data.data() + rng() % 64, len, rng() % 64);
    if (HasFatalFailure()) return;
  }
  // The chunked paths' edges: whole chunks and one byte either side.
  for (size_t chunk : {1536u, 3072u}) {
    for (size_t n = 1; n <= 4; ++n) {
      for (size_t len : {n * chunk - 1, n * chunk, n * chunk + 1}) {
        check(0x12345678u, data.data() + 3, len, 5);
        if (HasFatalFailure()) return;
      }
    }
  }
}

// A CRC continued across calls (any split, any mix of paths) is the CRC of the
// whole: the kernels work on the same register.
TEST_P(Crc32cPathTest, ContinuesAcrossCallsAndPaths) {
  std::mt19937_64 rng(test_seed() + 2);
  const auto data = random_bytes(5000, rng);
  const uint32_t whole = reference_crc(0, data.data(), data.size());
  for (size_t split = 0; split <= data.size(); split += 37) {
    for (Crc32cPath first : kAllCrc32cPaths) {
      if (!crc32c_available(first)) continue;
      const uint32_t head = crc32c_with(first, 0, data.data(), split);
      EXPECT_EQ(crc32c_with(GetParam(), head, data.data() + split, data.size() - split), whole)
          << "split " << split << " after " << crc32c_path_name(first);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllPaths, Crc32cPathTest, ::testing::ValuesIn(kAllCrc32cPaths),
                         [](const ::testing::TestParamInfo<Crc32cPath>& info) {
                           return std::string(crc32c_path_name(info.param));
                         });

TEST(Crc32c, TableAlwaysAvailableAndBestPathIsAvailable) {
  EXPECT_TRUE(crc32c_available(Crc32cPath::Table));
  EXPECT_TRUE(crc32c_available(crc32c_best_path()));
  std::printf("crc32c best path on this CPU: %s\n", crc32c_path_name(crc32c_best_path()));
}

TEST(Crc32c, UnavailablePathThrows) {
  for (Crc32cPath p : kAllCrc32cPaths) {
    if (crc32c_available(p)) continue;
    uint8_t b[4] = {};
    EXPECT_THROW(crc32c_with(p, 0, b, sizeof b), std::invalid_argument);
    EXPECT_THROW(crc32c_copy_with(p, 0, b, b, 0), std::invalid_argument);
  }
}

TEST(Crc32c, DispatchedFunctionsMatchReference) {
  std::mt19937_64 rng(test_seed() + 3);
  const auto data = random_bytes(70000, rng);
  std::vector<uint8_t> dst(data.size());
  for (size_t len : {0u, 1u, 63u, 64u, 1400u, 1401u, 8192u, 65536u, 70000u}) {
    const uint32_t want = reference_crc(7, data.data(), len);
    EXPECT_EQ(crc32c(7, data.data(), len), want) << len;
    EXPECT_EQ(crc32c_copy(7, dst.data(), data.data(), len), want) << len;
    EXPECT_EQ(std::memcmp(dst.data(), data.data(), len), 0) << len;
  }
}

// ---- mbuf chains ----

class Crc32cMbuf : public ::testing::Test {
 protected:
  void SetUp() override {
    pool_ = test::test_pool("crc32c_test");
    ASSERT_NE(pool_, nullptr);
  }

  // A chain whose segments hold `lengths` bytes; `flat` gets the same bytes.
  rte_mbuf* chain(const std::vector<uint16_t>& lengths, std::mt19937_64& rng, std::vector<uint8_t>* flat) {
    rte_mbuf* head = nullptr;
    flat->clear();
    for (uint16_t len : lengths) {
      rte_mbuf* m = rte_pktmbuf_alloc(pool_);
      EXPECT_NE(m, nullptr);
      auto* p = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, len));
      EXPECT_TRUE(len == 0 || p != nullptr);
      for (uint16_t i = 0; i < len; ++i) {
        p[i] = static_cast<uint8_t>(rng());
        flat->push_back(p[i]);
      }
      if (head == nullptr) {
        head = m;
      } else {
        EXPECT_EQ(rte_pktmbuf_chain(head, m), 0);
      }
    }
    return head;
  }

  // crc32c_mbuf_copy over [offset, offset + len) against the flat bytes, with
  // guards around dst; and crc32c_mbuf agrees.
  void check(const rte_mbuf* m, const std::vector<uint8_t>& flat, uint32_t offset, uint32_t len) {
    SCOPED_TRACE("offset " + std::to_string(offset) + " len " + std::to_string(len));
    const uint32_t want = reference_crc(0, flat.data() + offset, len);
    std::vector<uint8_t> out(kGuardBytes + len + kGuardBytes, kGuard);
    uint32_t got = ~want;
    ASSERT_TRUE(crc32c_mbuf_copy(m, offset, len, out.data() + kGuardBytes, &got));
    ASSERT_EQ(got, want);
    ASSERT_EQ(std::memcmp(out.data() + kGuardBytes, flat.data() + offset, len), 0);
    for (size_t i = 0; i < kGuardBytes; ++i) ASSERT_EQ(out[i], kGuard);
    for (size_t i = kGuardBytes + len; i < out.size(); ++i) ASSERT_EQ(out[i], kGuard);
    uint32_t plain = ~want;
    ASSERT_TRUE(crc32c_mbuf(m, offset, len, &plain));
    ASSERT_EQ(plain, want);
  }

  rte_mempool* pool_ = nullptr;
};

TEST_F(Crc32cMbuf, OffsetsInsideAndAcrossSegments) {
  std::mt19937_64 rng(test_seed() + 4);
  // Segments of odd sizes, one empty, one long: pieces of every alignment.
  const std::vector<uint16_t> lengths = {64, 1, 1400, 0, 333, 2000, 7};
  std::vector<uint8_t> flat;
  rte_mbuf* m = chain(lengths, rng, &flat);
  const auto total = static_cast<uint32_t>(flat.size());

  std::vector<uint32_t> points = {0, 1, 7, 8};  // segment boundaries and their neighbours
  uint32_t at = 0;
  for (uint16_t len : lengths) {
    at += len;
    for (uint32_t d : {at - 1, at, at + 1})
      if (d <= total) points.push_back(d);
  }
  for (uint32_t offset : points) {
    for (uint32_t end : points) {
      if (end < offset) continue;
      check(m, flat, offset, end - offset);
      if (HasFatalFailure()) return;
    }
  }
  for (int i = 0; i < 200; ++i) {
    const auto offset = static_cast<uint32_t>(rng() % (total + 1));
    const auto len = static_cast<uint32_t>(rng() % (total - offset + 1));
    check(m, flat, offset, len);
    if (HasFatalFailure()) return;
  }
  rte_pktmbuf_free(m);
}

// Segments shorter than a qword: every piece is a byte tail.
TEST_F(Crc32cMbuf, ManyTinySegments) {
  std::mt19937_64 rng(test_seed() + 7);
  std::vector<uint16_t> lengths;
  for (uint16_t len = 1; len <= 17; ++len) lengths.push_back(len);
  lengths.push_back(300);
  std::vector<uint8_t> flat;
  rte_mbuf* m = chain(lengths, rng, &flat);
  const auto total = static_cast<uint32_t>(flat.size());
  for (uint32_t offset = 0; offset <= total; ++offset) {
    for (uint32_t len : {0u, 1u, 7u, 8u, 9u, 63u, 64u, 65u, total - offset}) {
      if (len > total - offset) continue;
      check(m, flat, offset, len);
      if (HasFatalFailure()) return;
    }
  }
  rte_pktmbuf_free(m);
}

// Inside one segment every length takes the one-piece paths: under 72
// bytes the inline copy of 16 bytes a step and its tail of 0-15, from 72 the
// best path straight. Every length 0-300 from each of 17 offsets, against
// the reference and with guards around the copy.
TEST_F(Crc32cMbuf, EveryShortLengthInOnePiece) {
  std::mt19937_64 rng(test_seed() + 8);
  std::vector<uint8_t> flat;
  rte_mbuf* m = chain({400}, rng, &flat);
  for (uint32_t offset = 0; offset <= 16; ++offset) {
    for (uint32_t len = 0; len <= 300; ++len) {
      check(m, flat, offset, len);
      if (HasFatalFailure()) return;
    }
  }
  rte_pktmbuf_free(m);
}

TEST_F(Crc32cMbuf, SingleSegment) {
  std::mt19937_64 rng(test_seed() + 5);
  std::vector<uint8_t> flat;
  rte_mbuf* m = chain({1400}, rng, &flat);
  check(m, flat, 0, 1400);
  check(m, flat, 42, 1358);
  check(m, flat, 1400, 0);
  rte_pktmbuf_free(m);
}

TEST_F(Crc32cMbuf, TooShortChainIsRefusedAndOutUntouched) {
  std::mt19937_64 rng(test_seed() + 6);
  std::vector<uint8_t> flat;
  rte_mbuf* m = chain({100, 200, 50}, rng, &flat);
  std::vector<uint8_t> dst(1024);
  const uint32_t untouched = 0xDEADBEEF;
  struct Ask {
    uint32_t offset, len;
  };
  for (Ask a : {Ask{0, 351}, Ask{349, 2}, Ask{100, 251}, Ask{350, 1}, Ask{400, 1}, Ask{0, 1000}}) {
    SCOPED_TRACE("offset " + std::to_string(a.offset) + " len " + std::to_string(a.len));
    uint32_t out = untouched;
    EXPECT_FALSE(crc32c_mbuf_copy(m, a.offset, a.len, dst.data(), &out));
    EXPECT_EQ(out, untouched);
    EXPECT_FALSE(crc32c_mbuf(m, a.offset, a.len, &out));
    EXPECT_EQ(out, untouched);
  }
  // Exactly the chain, and nothing at its end, are fine.
  check(m, flat, 0, 350);
  check(m, flat, 350, 0);
  rte_pktmbuf_free(m);
}

}  // namespace
}  // namespace lanecast::engine
