// The ring of records streams and the daemon share (ipc/record_ring.h):
// records of every size come out as they went in, in order, across the
// wrap; a full ring refuses; a producer's scribbles make it corrupt instead
// of sending the consumer off the end (tests/security/shm_scribble_test.cc
// has the rest of the hostile cases). And the stream tree's shape for each
// fanout.
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "algos/topology/stream_tree.h"
#include "engine/stream/aligned_bytes.h"
#include "ipc/record_ring.h"

namespace lanecast::engine::stream {
namespace {

struct Ring {
  explicit Ring(uint64_t cap) : mem(aligned_bytes(RecordRing::bytes_for(cap))) {
    h = RecordRing::init(mem.get(), cap);
  }
  AlignedBytes mem;
  RecordRingHeader* h;
};

TEST(RecordRing, RecordsComeOutInOrderAcrossTheWrap) {
  Ring r(4096);
  RecordRing prod(r.h), cons(r.h);
  std::mt19937 rng(7);
  uint32_t written = 0, read = 0;
  for (int round = 0; round < 20000; ++round) {
    const uint32_t len = rng() % 900;
    if (uint8_t* p = prod.reserve(len, written)) {
      for (uint32_t i = 0; i < len; ++i) p[i] = static_cast<uint8_t>(written + i);
      prod.commit();
      ++written;
    }
    if (rng() % 3 == 0)
      for (RecordView v = cons.peek(); v.data != nullptr && rng() % 4 != 0; v = cons.peek()) {
        ASSERT_EQ(v.tag, read);
        for (uint32_t i = 0; i < v.len; ++i) ASSERT_EQ(v.data[i], static_cast<uint8_t>(read + i));
        cons.pop();
        ++read;
      }
  }
  EXPECT_GT(read, 1000u);
  EXPECT_FALSE(cons.corrupt());
}

TEST(RecordRing, AFullRingRefusesAndATooLargeRecordNeverFits) {
  Ring r(1024);
  RecordRing prod(r.h);
  int n = 0;
  while (prod.reserve(100, 0) != nullptr) {
    prod.commit();
    ++n;
  }
  EXPECT_EQ(n, 1024 / 112);
  EXPECT_EQ(prod.reserve(5000, 0), nullptr);
}

TEST(RecordRing, AScribbledHeadMakesItCorrupt) {
  Ring r(1024);
  RecordRing prod(r.h), cons(r.h);
  uint8_t* p = prod.reserve(16, 0);
  prod.commit();
  const uint32_t huge = 1u << 30;
  std::memcpy(p - RecordRing::kHeadBytes, &huge, 4);  // the length a crashed client left
  EXPECT_EQ(cons.peek().data, nullptr);
  EXPECT_TRUE(cons.corrupt());
  r.h->head.store(1u << 20);  // a head far past the tail
  RecordRing again(r.h);
  EXPECT_EQ(again.peek().data, nullptr);
  EXPECT_TRUE(again.corrupt());
  r.h->magic = 0;
  EXPECT_FALSE(RecordRing(r.h).valid());
}

TEST(RecordRing, TwoThreads) {
  Ring r(1 << 16);
  constexpr uint32_t kCount = 200000;
  std::thread producer([&] {
    RecordRing prod(r.h);
    for (uint32_t i = 0; i < kCount;) {
      const uint32_t len = i % 300;
      if (uint8_t* p = prod.reserve(len, i)) {
        std::memset(p, static_cast<int>(i & 0xff), len);
        prod.commit();
        ++i;
      }
    }
  });
  RecordRing cons(r.h);
  uint32_t read = 0;
  while (read < kCount) {
    const RecordView v = cons.peek();
    if (v.data == nullptr) continue;
    ASSERT_EQ(v.tag, read);
    ASSERT_EQ(v.len, read % 300);
    for (uint32_t i = 0; i < v.len; ++i) ASSERT_EQ(v.data[i], static_cast<uint8_t>(read & 0xff));
    cons.pop();
    ++read;
  }
  producer.join();
}

TEST(StreamTree, EveryMemberHasOneParentAndTheTreeSpansTheGroup) {
  for (uint32_t n : {1u, 2u, 3u, 8u, 17u})
    for (uint32_t k : {1u, 2u, 3u, 100u})
      for (algos::Rank pub : {0u, n - 1, n / 2}) {
        std::vector<uint32_t> parents(n, 0);
        uint32_t max_depth = 0;
        for (algos::Rank r = 0; r < n; ++r) {
          const algos::StreamTree t(n, pub, r, k);
          EXPECT_EQ(t.is_publisher(), r == pub);
          for (uint32_t i = 0; i < t.children(); ++i) {
            const algos::Rank c = t.child(i);
            ++parents[c];
            EXPECT_EQ(algos::StreamTree(n, pub, c, k).parent(), r);
            EXPECT_EQ(t.child_index(c), i);
          }
          max_depth = std::max(max_depth, t.depth());
        }
        for (algos::Rank r = 0; r < n; ++r) EXPECT_EQ(parents[r], r == pub ? 0u : 1u) << n << " " << k << " " << r;
        if (k == 1) {
          EXPECT_EQ(max_depth, n - 1);
        }
        if (k >= n - 1 && n > 1) {
          EXPECT_EQ(max_depth, 1u);
        }
      }
}

}  // namespace
}  // namespace lanecast::engine::stream
