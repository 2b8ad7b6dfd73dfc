// The reliable channel's bookkeeping, driven by hand with virtual time.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <vector>

#include "engine/reliable/recv_channel.h"
#include "engine/reliable/send_channel.h"

namespace lanecast::engine::reliable {
namespace {

constexpr uint64_t kUs = 1000;

TEST(RecvChannel, InOrderAdvancesCumulativeAck) {
  RecvChannel rx;
  for (uint32_t s = 0; s < 5; ++s) {
    ASSERT_EQ(rx.check(s), RecvChannel::Check::New);
    rx.accept(s);
  }
  EXPECT_EQ(rx.cumulative(), 5u);
  auto a = rx.make_ack();
  EXPECT_EQ(a.cum_ack, 5u);
  EXPECT_EQ(a.sack[0], 0u);
  EXPECT_FALSE(rx.ack_due());
}

TEST(RecvChannel, PastInOrderFutureAndDuplicates) {
  RecvChannel rx;
  rx.accept(0);
  rx.accept(2);  // future: a hole at 1
  EXPECT_EQ(rx.cumulative(), 1u);
  auto a = rx.make_ack();
  EXPECT_EQ(a.cum_ack, 1u);
  EXPECT_EQ(a.sack[0], 1u);  // bit 0 = seq 2
  EXPECT_EQ(rx.check(0), RecvChannel::Check::Duplicate);  // past
  EXPECT_EQ(rx.check(2), RecvChannel::Check::Duplicate);  // already held
  EXPECT_EQ(rx.check(1), RecvChannel::Check::New);        // the hole
  rx.accept(1);
  EXPECT_EQ(rx.cumulative(), 3u);
  EXPECT_EQ(rx.check(1 + wire::kSackBits + 3), RecvChannel::Check::OutOfWindow);
  EXPECT_EQ(rx.check(3 + wire::kSackBits), RecvChannel::Check::New);
}

TEST(RecvChannel, WrapsAroundSequenceSpace) {
  RecvChannel rx;
  // Walk cum close to 2^32 in order, then across.
  for (uint64_t s = 0; s < 300; ++s) rx.accept(static_cast<uint32_t>(s));
  EXPECT_EQ(rx.cumulative(), 300u);
}

TEST(SendChannel, RejectsWindowTheSackCannotDescribe) {
  EXPECT_THROW(SendChannel(0, RttParams{}), std::invalid_argument);
  EXPECT_THROW(SendChannel(wire::kSackBits + 2, RttParams{}), std::invalid_argument);
  EXPECT_NO_THROW(SendChannel(wire::kSackBits + 1, RttParams{}));
}

TEST(SendChannel, WindowBoundsFramesInFlight) {
  SendChannel tx(4, RttParams{});
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(tx.window_open());
    tx.push(1, i, 0);
  }
  EXPECT_FALSE(tx.window_open());
  uint64_t sack[2] = {0, 0};
  bool valid = false;
  EXPECT_EQ(tx.on_ack(2, sack, 10 * kUs, &valid), 2u);
  EXPECT_TRUE(valid);
  EXPECT_TRUE(tx.window_open());
  EXPECT_EQ(tx.in_flight(), 2u);
}

TEST(SendChannel, AckBeyondWhatWasSentIsInvalid) {
  SendChannel tx(8, RttParams{});
  tx.push(1, 0, 0);
  uint64_t sack[2] = {0, 0};
  bool valid = true;
  EXPECT_EQ(tx.on_ack(5, sack, 1, &valid), 0u);
  EXPECT_FALSE(valid);
  EXPECT_EQ(tx.in_flight(), 1u);
}

TEST(SendChannel, RetransmitsOnTimeoutWithBackoff) {
  RttParams p;
  p.initial_rto_ns = 100 * kUs;
  SendChannel tx(8, p);
  tx.push(1, 7, 0);
  std::vector<uint32_t> due;
  auto collect = [&](uint64_t now) {
    due.clear();
    tx.collect_due(now, [&](uint32_t seq, const SendChannel::Entry& e) {
      EXPECT_EQ(e.segment, 7u);
      due.push_back(seq);
      return true;
    });
  };
  collect(50 * kUs);
  EXPECT_TRUE(due.empty());
  collect(100 * kUs);
  ASSERT_EQ(due.size(), 1u);  // first retransmit at the RTO
  collect(250 * kUs);
  EXPECT_TRUE(due.empty());   // backed off to 2 x RTO after the retransmit
  collect(300 * kUs);
  EXPECT_EQ(due.size(), 1u);
}

TEST(SendChannel, SelectiveAckTriggersOneFastRetransmitOfTheHole) {
  SendChannel tx(16, RttParams{});
  for (uint32_t i = 0; i < 8; ++i) tx.push(1, i, 0);
  // Receiver holds 0, misses 1, holds 2..7: cum = 1, sack bits 0..5 = seqs 2..7.
  uint64_t sack[2] = {0x3F, 0};
  bool valid = false;
  EXPECT_EQ(tx.on_ack(1, sack, 5 * kUs, &valid), 7u);
  std::vector<uint32_t> due;
  tx.collect_due(6 * kUs, [&](uint32_t seq, const SendChannel::Entry&) { due.push_back(seq); return true; });
  ASSERT_EQ(due, std::vector<uint32_t>{1});
  // A second identical ack does not retransmit again before the timer.
  tx.on_ack(1, sack, 7 * kUs, &valid);
  due.clear();
  tx.collect_due(8 * kUs, [&](uint32_t seq, const SendChannel::Entry&) { due.push_back(seq); return true; });
  EXPECT_TRUE(due.empty());
}

// Randomised end-to-end check of the two halves: a lossy, reordering link in
// virtual time delivers every sequence number exactly once.
TEST(Channel, LossyReorderingLinkDeliversEverythingOnce) {
  const uint64_t seed = 12345;
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  RttParams p;
  p.initial_rto_ns = 50 * kUs;
  p.min_rto_ns = 20 * kUs;
  SendChannel tx(64, p);
  RecvChannel rx;
  struct InAir { uint64_t at; uint32_t seq; bool ack; wire::AckBody a; };
  std::vector<InAir> air;
  std::multiset<uint32_t> delivered;
  const uint32_t total = 5000;
  uint32_t pushed = 0;
  uint64_t now = 0;
  for (int step = 0; step < 2'000'000 && (delivered.size() < total || !tx.idle()); ++step) {
    now += kUs;
    while (pushed < total && tx.window_open()) {
      const uint32_t seq = tx.push(1, pushed++, now);
      if (rng() % 10 != 0) air.push_back({now + 5 * kUs + rng() % (20 * kUs), seq, false, {}});
    }
    tx.collect_due(now, [&](uint32_t seq, const SendChannel::Entry&) {
      if (rng() % 10 != 0) air.push_back({now + 5 * kUs + rng() % (20 * kUs), seq, false, {}});
      return true;
    });
    std::vector<InAir> later;
    for (auto& f : air) {
      if (f.at > now) { later.push_back(f); continue; }
      if (f.ack) {
        bool valid;
        tx.on_ack(f.a.cum_ack, f.a.sack, now, &valid);
        EXPECT_TRUE(valid);
        continue;
      }
      if (rx.check(f.seq) == RecvChannel::Check::New) {
        rx.accept(f.seq);
        delivered.insert(f.seq);
      } else {
        rx.request_ack();
      }
      if (rx.ack_due() && rng() % 10 != 0)
        later.push_back({now + 5 * kUs, 0, true, rx.make_ack()});
    }
    air.swap(later);
  }
  ASSERT_EQ(delivered.size(), total);
  for (uint32_t s = 0; s < total; ++s) EXPECT_EQ(delivered.count(s), 1u) << "seq " << s;
  EXPECT_TRUE(tx.idle());
}

}  // namespace
}  // namespace lanecast::engine::reliable

namespace lanecast::engine::reliable {
namespace {

TEST(SendChannel, BlockedRetransmitStaysDue) {
  RttParams p;
  p.initial_rto_ns = 100 * kUs;
  SendChannel tx(8, p);
  tx.push(1, 0, 0);
  EXPECT_EQ(tx.collect_due(200 * kUs, [](uint32_t, const SendChannel::Entry&) { return false; }), 0u);
  std::vector<uint32_t> due;
  tx.collect_due(201 * kUs, [&](uint32_t seq, const SendChannel::Entry&) { due.push_back(seq); return true; });
  EXPECT_EQ(due, std::vector<uint32_t>{0});
}

TEST(SendChannel, TimeoutsRetransmitAFewAndHalveTheWindow) {
  RttParams p;
  p.initial_rto_ns = 100 * kUs;
  p.shrink_on_timeout = true;
  SendChannel tx(64, p);
  for (uint32_t i = 0; i < 64; ++i) tx.push(1, i, 0);
  EXPECT_FALSE(tx.window_open());
  uint32_t n = tx.collect_due(500 * kUs, [](uint32_t, const SendChannel::Entry&) { return true; });
  EXPECT_LE(n, 4u);   // not the whole window at once
  EXPECT_GE(n, 1u);
  EXPECT_LE(tx.cwnd(), 32u);
  // Acks grow the window back.
  uint64_t sack[2] = {0, 0};
  bool valid;
  tx.on_ack(64, sack, 600 * kUs, &valid);
  EXPECT_TRUE(tx.window_open());
}

}  // namespace
}  // namespace lanecast::engine::reliable
