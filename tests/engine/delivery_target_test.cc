// Where a member's in-order stream messages go (engine/stream/delivery_target.h),
// alone: into the ring the application reads - head and bytes, whole or put
// together from pieces, a full ring counted and nothing lost - or to a
// handler, without a copy for a whole message.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "engine/stream/delivery_target.h"

namespace lanecast::engine::stream {
namespace {

DeliveredHead head(uint64_t seq) { return DeliveredHead{seq, 1000 + seq, 3, 1, 0}; }

// The application's side: every message in the ring, oldest first.
std::vector<std::pair<DeliveredHead, std::string>> drain(RecordRingHeader* h) {
  std::vector<std::pair<DeliveredHead, std::string>> out;
  RecordRing r(h);
  for (RecordView v = r.peek(); v.data != nullptr; v = r.peek()) {
    EXPECT_GE(v.len, sizeof(DeliveredHead));
    DeliveredHead d;
    std::memcpy(&d, v.data, sizeof d);
    out.emplace_back(d, std::string(reinterpret_cast<const char*>(v.data) + sizeof d, v.len - sizeof d));
    r.pop();
  }
  return out;
}

TEST(DeliveryTargetPart, MessagesGoIntoTheRingWithTheirHeadsWholeOrFromPieces) {
  DeliveryTarget::Counters k;
  DeliveryTarget t(k);
  EXPECT_EQ(t.ring(), nullptr) << "no memory before the first stream";
  t.open(4096, 1 << 20);
  ASSERT_NE(t.ring(), nullptr);
  EXPECT_FALSE(t.to_handler());
  const std::string a = "first message";
  ASSERT_TRUE(t.put(head(0), reinterpret_cast<const uint8_t*>(a.data()), static_cast<uint32_t>(a.size())));
  // A message in three pieces, put together in the ring's own room.
  const std::string parts[] = {"one-", "two-", "three"};
  uint8_t* dst = t.begin(head(1), 13);
  ASSERT_NE(dst, nullptr);
  size_t at = 0;
  for (const std::string& p : parts) {
    std::memcpy(dst + at, p.data(), p.size());
    at += p.size();
  }
  EXPECT_EQ(drain(t.ring()).size(), 1u) << "not visible before finish()";
  t.finish(head(1), dst, 13);
  const auto got = drain(t.ring());
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].first.seq, 1u);
  EXPECT_EQ(got[0].first.timestamp_ns, 1001u);
  EXPECT_EQ(got[0].first.publisher, 3u);
  EXPECT_EQ(got[0].second, "one-two-three");
  EXPECT_EQ(k.full.get(), 0u);
}

TEST(DeliveryTargetPart, AFullRingRefusesCountsAndLosesNothing) {
  DeliveryTarget::Counters k;
  DeliveryTarget t(k);
  t.open(4096, 1 << 20);
  const std::vector<uint8_t> msg(900, 0x61);
  uint64_t seq = 0;
  while (t.put(head(seq), msg.data(), static_cast<uint32_t>(msg.size()))) ++seq;
  EXPECT_GE(seq, 3u);
  EXPECT_EQ(k.full.get(), 1u);
  EXPECT_EQ(t.begin(head(seq), msg.size()), nullptr);
  EXPECT_EQ(k.full.get(), 2u);
  // The application takes what is there; the refused message goes next,
  // so the sequence has no gap.
  const auto first = drain(t.ring());
  ASSERT_EQ(first.size(), seq);
  for (uint64_t i = 0; i < seq; ++i) EXPECT_EQ(first[i].first.seq, i);
  ASSERT_TRUE(t.put(head(seq), msg.data(), static_cast<uint32_t>(msg.size())));
  const auto second = drain(t.ring());
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].first.seq, seq);
  EXPECT_EQ(second[0].second, std::string(900, 'a'));
}

TEST(DeliveryTargetPart, AHandlerGetsWholeMessagesWithoutACopyAndPiecesPutTogether) {
  DeliveryTarget::Counters k;
  DeliveryTarget t(k);
  std::vector<std::pair<uint64_t, const uint8_t*>> calls;
  std::vector<std::string> bytes;
  t.set_handler([&](const DeliveredHead& h, const uint8_t* b, uint32_t n) {
    calls.emplace_back(h.seq, b);
    bytes.emplace_back(reinterpret_cast<const char*>(b), n);
  });
  t.open(4096, 64);
  EXPECT_TRUE(t.to_handler());
  EXPECT_EQ(t.ring(), nullptr) << "no ring when a handler takes the messages";
  const std::string a = "zero copy";
  ASSERT_TRUE(t.put(head(0), reinterpret_cast<const uint8_t*>(a.data()), static_cast<uint32_t>(a.size())));
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].second, reinterpret_cast<const uint8_t*>(a.data())) << "the batch's own bytes";
  uint8_t* dst = t.begin(head(1), 10);
  ASSERT_NE(dst, nullptr);
  std::memcpy(dst, "abcdefghij", 10);
  t.finish(head(1), dst, 10);
  ASSERT_EQ(bytes.size(), 2u);
  EXPECT_EQ(bytes[1], "abcdefghij");
  EXPECT_EQ(t.begin(head(2), 65), nullptr) << "past the largest message it was opened for";
}

}  // namespace
}  // namespace lanecast::engine::stream
