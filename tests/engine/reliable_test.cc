// The reliable channel's bookkeeping, driven by hand with virtual time.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <memory>
#include <numeric>
#include <random>
#include <set>
#include <vector>

#include "engine/reliable/flight_pool.h"
#include "engine/reliable/recv_channel.h"
#include "engine/reliable/send_channel.h"

namespace lanecast::engine::reliable {
namespace {

constexpr uint64_t kUs = 1000;

uint64_t test_seed() {
  if (const char* s = std::getenv("LANECAST_SEED")) return std::strtoull(s, nullptr, 10);
  return 20261123;
}

// A send channel with a slab of its own.
struct Sender {
  explicit Sender(uint32_t window, const RttParams& p = RttParams{}) : pool(1, window), tx(window, p) {
    tx.attach(pool.take());
  }
  FlightPool pool;
  SendChannel tx;
};

// Everything queued for sending again, in order.
std::vector<uint32_t> drain_resends(SendChannel& tx, uint64_t now) {
  std::vector<uint32_t> out;
  while (tx.has_resend()) {
    out.push_back(tx.resend_front());
    tx.resend_done(now);
  }
  return out;
}

TEST(RecvChannel, InOrderAdvancesCumulativeAck) {
  RecvChannel rx;
  for (uint32_t s = 0; s < 5; ++s) {
    ASSERT_EQ(rx.check(s), RecvChannel::Check::New);
    EXPECT_TRUE(rx.accept(s));
  }
  EXPECT_EQ(rx.cumulative(), 5u);
  auto a = rx.make_ack(1);
  EXPECT_EQ(a.cum_ack, 5u);
  EXPECT_EQ(a.lane, 1u);
  EXPECT_EQ(a.sack[0], 0u);
}

TEST(RecvChannel, PastInOrderFutureAndDuplicates) {
  RecvChannel rx;
  EXPECT_TRUE(rx.accept(0));
  EXPECT_FALSE(rx.accept(2));  // future: a hole at 1
  EXPECT_EQ(rx.cumulative(), 1u);
  auto a = rx.make_ack(0);
  EXPECT_EQ(a.cum_ack, 1u);
  EXPECT_EQ(a.sack[0], 1u);  // bit 0 = seq 2
  EXPECT_EQ(rx.check(0), RecvChannel::Check::Duplicate);  // past
  EXPECT_EQ(rx.check(2), RecvChannel::Check::Duplicate);  // already held
  EXPECT_EQ(rx.check(1), RecvChannel::Check::New);        // the hole
  EXPECT_TRUE(rx.accept(1));
  EXPECT_EQ(rx.cumulative(), 3u);
  EXPECT_EQ(rx.check(1 + wire::kSackBits + 3), RecvChannel::Check::OutOfWindow);
  EXPECT_EQ(rx.check(3 + wire::kSackBits), RecvChannel::Check::New);
}

TEST(RecvChannel, SelectiveBitsMatchWhatWasAcceptedAcrossTheRing) {
  const uint64_t seed = test_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (LANECAST_SEED replays)");
  std::mt19937_64 rng(seed);
  RecvChannel rx;
  std::set<uint32_t> held;
  uint32_t cum = 0;
  for (int round = 0; round < 3000; ++round) {
    // Accept a random new seq within the window, sometimes the next in order.
    const uint32_t s = rng() % 3 == 0 ? cum : cum + static_cast<uint32_t>(rng() % (wire::kSackBits + 1));
    if (rx.check(s) != RecvChannel::Check::New) continue;
    rx.accept(s);
    held.insert(s);
    while (held.count(cum)) held.erase(cum++);
    const auto a = rx.make_ack(0);
    ASSERT_EQ(a.cum_ack, cum);
    for (uint32_t i = 0; i < wire::kSackBits; ++i)
      ASSERT_EQ(a.sack[i / 64] >> (i % 64) & 1, held.count(cum + 1 + i)) << "bit " << i << " round " << round;
  }
}

TEST(SendChannel, RejectsWindowTheSackCannotDescribe) {
  EXPECT_THROW(SendChannel(0, RttParams{}), std::invalid_argument);
  EXPECT_THROW(SendChannel(wire::kSackBits + 2, RttParams{}), std::invalid_argument);
  EXPECT_NO_THROW(SendChannel(wire::kSackBits + 1, RttParams{}));
}

TEST(SendChannel, NeedsASlabAndGivesItBackWhenIdle) {
  FlightPool pool(1, 8);
  SendChannel tx(8, RttParams{});
  EXPECT_FALSE(tx.window_open());  // nothing to record frames in
  tx.attach(pool.take());
  EXPECT_EQ(pool.take(), nullptr);  // the only slab is lent
  ASSERT_TRUE(tx.window_open());
  tx.push(1, 0, 0);
  uint64_t sack[2] = {0, 0};
  EXPECT_EQ(tx.on_ack(1, sack, 10 * kUs).newly, 1u);
  ASSERT_TRUE(tx.idle());
  pool.give_back(tx.detach());
  EXPECT_EQ(pool.in_use(), 0u);
}

TEST(SendChannel, WindowBoundsFramesInFlight) {
  Sender s(4);
  for (uint32_t i = 0; i < 4; ++i) {
    ASSERT_TRUE(s.tx.window_open());
    EXPECT_EQ(s.tx.last_in_window(), i == 3);
    EXPECT_EQ(s.tx.push(1, i, 0), i);
  }
  EXPECT_FALSE(s.tx.window_open());
  uint64_t sack[2] = {0, 0};
  const auto r = s.tx.on_ack(2, sack, 10 * kUs);
  EXPECT_TRUE(r.valid);
  EXPECT_EQ(r.newly, 2u);
  EXPECT_TRUE(s.tx.window_open());
  EXPECT_EQ(s.tx.in_flight(), 2u);
}

// Rate control hears what the path delivered from these sums: a stream's
// batch of one 64-byte message is a tenth of a full segment's frame, and
// counting it as a full one told the controller ten times what got through.
TEST(SendChannel, AckSumsTheSizesOfTheFramesItNewlyCovers) {
  Sender s(8);
  const uint32_t sizes[4] = {1514, 146, 1514, 90};
  for (uint32_t i = 0; i < 4; ++i) s.tx.push(1, i, 0, false, i == 1, sizes[i]);
  uint64_t sack[2] = {0b10, 0};  // cum 1; bit 1 = seq 3
  auto r = s.tx.on_ack(1, sack, 10 * kUs);
  EXPECT_EQ(r.newly, 2u);
  EXPECT_EQ(r.newly_bytes, 1514u + 90u);
  sack[0] = 0;
  r = s.tx.on_ack(4, sack, 20 * kUs);  // seq 3 again: not counted twice
  EXPECT_EQ(r.newly, 2u);
  EXPECT_EQ(r.newly_stream, 1u);
  EXPECT_EQ(r.newly_bytes, 146u + 1514u);
}

// The usual ack - cumulative only, nothing acknowledged selectively before,
// nothing queued again - moves the base at once; across words of the
// bitmaps and the ring's end it must sum and count as the frame-by-frame
// path does, and leave the bitmaps clean for the frames that reuse the slots.
TEST(SendChannel, CumulativeAcksAcrossTheRingsEndCountEveryFrameOnce) {
  Sender s(128);
  uint64_t sack[2] = {0, 0};
  uint64_t sent_bytes = 0, acked_bytes = 0;
  uint32_t acked = 0, next = 0;
  // 700 frames through a 128-slot ring, acked 0-97 at a time.
  for (uint32_t round = 0; next < 700; ++round) {
    while (s.tx.window_open() && next < 700) {
      const uint32_t bytes = 60 + next % 1400;
      s.tx.push(1, next, round * kUs, false, next % 7 == 0, bytes);
      sent_bytes += bytes;
      ++next;
    }
    const uint32_t cum = std::min(next, acked + (round * 37) % 98);
    const auto r = s.tx.on_ack(cum, sack, (round + 1) * kUs);
    ASSERT_TRUE(r.valid);
    EXPECT_EQ(r.newly, cum - acked);
    uint32_t streams = 0;
    for (uint32_t q = acked; q < cum; ++q) streams += q % 7 == 0;
    EXPECT_EQ(r.newly_stream, streams);
    acked_bytes += r.newly_bytes;
    acked = cum;
    EXPECT_EQ(s.tx.in_flight(), next - acked);
  }
  const auto r = s.tx.on_ack(next, sack, (1000 * kUs));
  acked_bytes += r.newly_bytes;
  EXPECT_EQ(acked_bytes, sent_bytes);
  EXPECT_TRUE(s.tx.idle());
  // A selective ack after all that: the slots it names were left clean.
  for (uint32_t i = 0; i < 4; ++i) s.tx.push(1, 1000 + i, 2 * (1000 * kUs));
  sack[0] = 0b10;  // cum = next + 1; bit 1 = next + 3
  const auto sel = s.tx.on_ack(next + 1, sack, 3 * (1000 * kUs));
  EXPECT_EQ(sel.newly, 2u);
  EXPECT_EQ(s.tx.in_flight(), 3u);
}

TEST(SendChannel, AckBeyondWhatWasSentIsInvalid) {
  Sender s(8);
  s.tx.push(1, 0, 0);
  uint64_t sack[2] = {0, 0};
  EXPECT_FALSE(s.tx.on_ack(5, sack, 1).valid);
  EXPECT_TRUE(s.tx.on_ack(1, sack, 1).valid);
}

// A forged ack (no key) acknowledges frames 2..5 that never arrived; the
// receiver's own acks still say 2. When the timer fires the channel sends
// 2..5 again empty (fillers), so the receiver's window moves on; before,
// its acks were ignored as old and the window waited for 2 for ever.
TEST(SendChannel, AReceiverBehindWhatWasAcknowledgedGetsFillers) {
  Sender s(8);
  for (uint32_t i = 0; i < 6; ++i) s.tx.push(1, i, 0);
  uint64_t sack[2] = {0, 0};
  ASSERT_TRUE(s.tx.on_ack(2, sack, 10).valid);  // genuine: 0 and 1 arrived
  ASSERT_TRUE(s.tx.on_ack(6, sack, 20).valid);  // forged: everything
  EXPECT_TRUE(s.tx.idle());
  s.tx.push(2, 0, 30);  // the next broadcast's frame 6: sacked, cumulative 2
  sack[0] = uint64_t{1} << 3;
  EXPECT_TRUE(s.tx.on_ack(2, sack, 40).valid);
  EXPECT_FALSE(s.tx.has_filler()) << "not before the timer: an ack may be a stale one overtaken";
  EXPECT_GT(s.tx.on_timeout(s.tx.deadline()), 0u);
  std::vector<uint32_t> fillers;
  while (s.tx.has_filler()) {
    fillers.push_back(s.tx.filler_front());
    s.tx.filler_done();
  }
  EXPECT_EQ(fillers, (std::vector<uint32_t>{2, 3, 4, 5}));
  sack[0] = 0;
  EXPECT_EQ(s.tx.on_ack(7, sack, 50).newly, 1u);  // the receiver caught up
  EXPECT_TRUE(s.tx.idle());
}

// The timer is the channel's: while acks acknowledge something new, no frame
// is sent again, however long it waited in a queue. Frames deep in a 5 ms
// switch queue outlived an RTO learned on an empty one under a timer per
// frame, and were all sent twice (issue: spurious retransmissions).
TEST(SendChannel, NoTimeoutWhileAcksKeepComing) {
  RttParams p;
  p.initial_rto_ns = 1000 * kUs;
  p.min_rto_ns = 200 * kUs;
  Sender s(128, p);
  // A link that drains one frame every 100 us behind a queue of 128 frames:
  // the last frame's round trip is 12.8 ms, 12x the RTO; acks come every frame.
  uint64_t now = 0;
  uint32_t sent = 0, acked = 0;
  std::deque<std::pair<uint64_t, uint32_t>> queue;  // (arrival, seq)
  for (int step = 0; step < 200000 && acked < 2000; ++step) {
    now += 10 * kUs;
    while (sent < 2000 && s.tx.window_open()) {
      const uint64_t start = queue.empty() ? now : std::max(now, queue.back().first);
      queue.emplace_back(start + 100 * kUs, s.tx.push(1, sent++, now));
    }
    while (!queue.empty() && queue.front().first <= now) {
      uint64_t sack[2] = {0, 0};
      const auto r = s.tx.on_ack(queue.front().second + 1, sack, now);
      ASSERT_TRUE(r.valid);
      acked += r.newly;
      queue.pop_front();
    }
    ASSERT_LT(now, s.tx.deadline()) << "the timer fired although acks kept coming";
  }
  EXPECT_EQ(acked, 2000u);
  EXPECT_FALSE(s.tx.has_resend());
  EXPECT_GE(s.tx.srtt_ns(), 5000 * kUs) << "the RTT under load was learned";
}

// The timer waits at least twice the longest pause the receiver took to
// answer lately. A frame lost at the window's base while the sender has
// little to send (a forwarder waiting for its own upstream) is no such pause:
// each new frame the sender gets to send is answered at once (selectively),
// after a silence that was the sender's. Taken for the receiver's, each one
// could double the timer (in a chain of 8 under 5% loss, lost frames waited
// 40-90 ms for it; here, 200 ms). A receiver that does pause before answering
// what it had is still waited for.
TEST(SendChannel, TheSendersSilenceIsNotAPauseOfTheReceiver) {
  Sender s(128);
  s.tx.push(1, 0, 0);
  uint64_t none[2] = {0, 0};
  s.tx.on_ack(1, none, 20 * kUs);  // a round trip of 20 us: the RTO is its floor, 1 ms
  ASSERT_EQ(s.tx.timeout_ns(), 1000 * kUs);
  s.tx.push(1, 1, 30 * kUs);       // lost
  uint64_t sack[2] = {0, 0};
  for (uint32_t k = 0; k < 8; ++k) {
    // Quiet until just before the timer would fire; then one more frame,
    // answered 10 us later, selectively (frame 1 is still missing).
    const uint64_t t = s.tx.deadline() - 10 * kUs;
    s.tx.push(1, 2 + k, t);
    sack[0] |= uint64_t{1} << k;  // bit k: seq 2 + k
    const auto r = s.tx.on_ack(1, sack, t + 10 * kUs);
    ASSERT_EQ(r.newly, 1u);
    ASSERT_LT(t + 10 * kUs, s.tx.deadline());
  }
  EXPECT_LE(s.tx.timeout_ns(), 2000 * kUs) << "the sender's silences raised the timer to "
                                           << s.tx.timeout_ns() / kUs << " us";
  // The receiver pauses 3 ms before it answers frames it had: waited for.
  const uint64_t t = s.tx.deadline() - 10 * kUs;
  s.tx.push(1, 10, t);
  sack[0] |= uint64_t{1} << 8;
  s.tx.on_ack(1, sack, t + 3000 * kUs);
  EXPECT_GE(s.tx.timeout_ns(), 6000 * kUs);
}

TEST(SendChannel, TimeoutSendsTheOldestFewAgainAndBacksOff) {
  RttParams p;
  p.initial_rto_ns = 100 * kUs;
  p.min_rto_ns = 100 * kUs;
  Sender s(64, p);
  for (uint32_t i = 0; i < 64; ++i) s.tx.push(1, i, 0);
  EXPECT_EQ(s.tx.deadline(), 100 * kUs);
  // Seq 1 arrived (selectively acked): the timeout skips it.
  uint64_t sack[2] = {0b1, 0};  // bit 0 = cum_ack + 1 = seq 1
  s.tx.on_ack(0, sack, 10 * kUs);
  EXPECT_EQ(s.tx.deadline(), 110 * kUs);  // progress restarted the timer
  EXPECT_EQ(s.tx.on_timeout(110 * kUs), 4u);  // not the whole window at once
  EXPECT_EQ(drain_resends(s.tx, 110 * kUs), (std::vector<uint32_t>{0, 2, 3, 4}));
  EXPECT_EQ(s.tx.rto_ns(), 200 * kUs);  // doubled (RFC 6298 5.5)
  EXPECT_EQ(s.tx.deadline(), 310 * kUs);
  EXPECT_EQ(s.tx.entry(0).tries, 2u);
}

// A channel whose receiver answered one frame (RTO now its 1 ms floor), then
// went quiet with `n` more in flight: its timer fired at 1.1 ms and sent the
// oldest (at most 4) again.
std::unique_ptr<Sender> timed_out(const RttParams& p, uint32_t n) {
  auto s = std::make_unique<Sender>(64, p);
  const uint64_t none[2] = {0, 0};
  s->tx.push(1, 0, 0);
  s->tx.on_ack(1, none, 20 * kUs);
  for (uint32_t i = 1; i <= n; ++i) s->tx.push(1, i, 100 * kUs);
  EXPECT_EQ(s->tx.deadline(), 1100 * kUs);
  EXPECT_EQ(s->tx.on_timeout(s->tx.deadline()), std::min(n, 4u));
  std::vector<uint32_t> oldest(std::min(n, 4u));
  std::iota(oldest.begin(), oldest.end(), 1u);
  EXPECT_EQ(drain_resends(s->tx, 1100 * kUs), oldest);
  return s;
}

// A timer that fired while the receiver's core did not run: the acks that
// follow cover frames sent before the timeout and never sent again - they
// arrived, late. The timeout is reported spurious (F-RTO, RFC 5682). The
// silence is not learned as a pause (a lost ack looks the same, and each
// would double the timer). A timeout whose frames were lost is not spurious.
TEST(SendChannel, ATimeoutOfALateReceiverIsSpurious) {
  RttParams p;
  p.initial_rto_ns = 1000 * kUs;
  const uint64_t none[2] = {0, 0};
  // Eight frames, the receiver stalled for 3 ms: it acknowledges all eight
  // at 3.1 ms, and 5..8 were never sent again.
  const auto s = timed_out(p, 8);
  const auto r = s->tx.on_ack(9, none, 3100 * kUs);
  EXPECT_EQ(r.newly, 8u);
  EXPECT_TRUE(r.spurious_timeout);
  EXPECT_LE(s->tx.timeout_ns(), 2000 * kUs) << "the silence is not learned as a pause";
  EXPECT_FALSE(s->tx.on_ack(9, none, 3110 * kUs, true).spurious_timeout) << "told once";

  // At a broadcast's tail the timer re-sends everything in flight: only the
  // receiver's report of duplicates tells, in the ack that answers the
  // originals or in one after it (the channel idle by then), up to a
  // timeout later.
  for (const bool same_ack : {true, false}) {
    const auto t = timed_out(p, 3);
    EXPECT_EQ(t->tx.on_ack(4, none, 3100 * kUs, same_ack).spurious_timeout, same_ack);
    ASSERT_TRUE(t->tx.idle());
    EXPECT_EQ(t->tx.on_ack(4, none, 3110 * kUs, !same_ack).spurious_timeout, !same_ack);
  }

  // Lost: every frame in flight was dropped, and only the copies the timer
  // sent again are acknowledged.
  const auto l = timed_out(p, 4);
  const auto lost = l->tx.on_ack(5, none, 1150 * kUs);
  EXPECT_EQ(lost.newly, 4u);
  EXPECT_FALSE(lost.spurious_timeout);
  EXPECT_EQ(l->tx.timeout_ns(), 2000 * kUs) << "the doubled RTO: a loss teaches the timer no pause";
  // A duplicate reported long after (a fast retransmit's, say) says nothing
  // of that timeout.
  EXPECT_FALSE(l->tx.on_ack(5, none, 9000 * kUs, true).spurious_timeout);
}

TEST(RecvChannel, DuplicatesAreReportedOnce) {
  RecvChannel rx;
  rx.accept(0);
  ASSERT_EQ(rx.check(0), RecvChannel::Check::Duplicate);
  EXPECT_FALSE(rx.take_duplicates());
  rx.note_duplicate();
  rx.note_duplicate();
  EXPECT_TRUE(rx.take_duplicates());
  EXPECT_FALSE(rx.take_duplicates());
}

TEST(RecvChannel, TheAckEchoesWhenTheNewestFrameArrived) {
  RecvChannel rx;
  EXPECT_EQ(rx.make_ack(0).newest_rx_ns, 0u) << "nothing arrived yet";
  rx.note_arrival(3, 500 * kUs);
  rx.accept(3);
  rx.note_arrival(1, 600 * kUs);  // older than 3 (a hole filled late): not the newest
  rx.accept(1);
  auto a = rx.make_ack(0);
  EXPECT_EQ(a.newest_seq, 3u);
  EXPECT_EQ(a.newest_rx_ns, 500 * kUs);
  rx.note_arrival(4, 0);  // a clock at 0 is still an arrival
  a = rx.make_ack(0);
  EXPECT_EQ(a.newest_seq, 4u);
  EXPECT_NE(a.newest_rx_ns, 0u);
}

// The one-way delay is learned up to the two clocks' offset - here the
// receiver's clock is 7 s behind the sender's, so rx - sent is negative -
// and what the channel reports is the queue above the least of it: the
// forward path's alone, however long the ack then took to come back.
TEST(SendChannel, TheQueueOnTheWayThereComesFromTheEchoedArrival) {
  Sender s(16);
  const uint64_t offset = 7'000'000 * kUs;  // receiver clock = sender clock - offset
  const uint64_t t0 = 8'000'000 * kUs;
  const uint64_t none[2] = {0, 0};
  // Frame 0: 40 us there, acked 1 ms later (a queue on the way back).
  s.tx.push(1, 0, t0);
  auto r = s.tx.on_ack(1, none, t0 + 1040 * kUs, false, {0, t0 + 40 * kUs - offset});
  EXPECT_EQ(r.path_rtt_ns, 1040 * kUs);
  EXPECT_EQ(r.forward_queue_ns, 0u) << "the first sample is the base";
  // Frame 1: 340 us there (300 us of queue), back at once.
  s.tx.push(1, 1, t0 + 2000 * kUs);
  r = s.tx.on_ack(2, none, t0 + 2350 * kUs, false, {1, t0 + 2340 * kUs - offset});
  EXPECT_EQ(r.forward_queue_ns, 300 * kUs);
  // Frame 2: an ack that echoes another frame's arrival gives no sample.
  s.tx.push(1, 2, t0 + 3000 * kUs);
  r = s.tx.on_ack(3, none, t0 + 3100 * kUs, false, {1, t0 + 2340 * kUs - offset});
  EXPECT_EQ(r.forward_queue_ns, UINT64_MAX);
  EXPECT_NE(r.path_rtt_ns, 0u);
  // Nor does one that echoes nothing (rx 0).
  s.tx.push(1, 3, t0 + 4000 * kUs);
  EXPECT_EQ(s.tx.on_ack(4, none, t0 + 4100 * kUs).forward_queue_ns, UINT64_MAX);
}

TEST(SendChannel, TheBaseOneWayDelayFollowsAClockThatDrifted) {
  RttParams p;
  p.base_window_ns = 100'000 * kUs;  // 100 ms
  Sender s(16, p);
  const uint64_t none[2] = {0, 0};
  uint64_t now = 1000 * kUs;
  uint32_t seq = 0;
  auto owd_sample = [&](uint64_t owd_ns) {
    s.tx.push(1, seq, now);
    const auto r = s.tx.on_ack(seq + 1, none, now + owd_ns + 10 * kUs, false, {seq, now + owd_ns});
    ++seq;
    now += 10'000 * kUs;
    return r.forward_queue_ns;
  };
  EXPECT_EQ(owd_sample(50 * kUs), 0u);
  EXPECT_EQ(owd_sample(250 * kUs), 200 * kUs);
  // The receiver's clock now reads 100 us later than before, for good: once
  // two windows passed, that is the base, not a queue.
  uint64_t last = 0;
  for (int i = 0; i < 25; ++i) last = owd_sample(150 * kUs);
  EXPECT_EQ(last, 0u);
}

TEST(SendChannel, SelectiveAckTriggersOneFastRetransmitOfTheHole) {
  Sender s(16);
  for (uint32_t i = 0; i < 8; ++i) s.tx.push(1, i, 0);
  // Seq 2 lost; 0, 1 and 3..5 arrived: 3 frames past the hole.
  uint64_t sack[2] = {0b111, 0};  // cum_ack 2: bits for 3, 4, 5
  const auto r = s.tx.on_ack(2, sack, 50 * kUs);
  EXPECT_EQ(r.newly, 5u);
  EXPECT_TRUE(r.new_holes);
  EXPECT_EQ(drain_resends(s.tx, 50 * kUs), std::vector<uint32_t>{2});
  // The same information again: the hole was already sent again once.
  EXPECT_FALSE(s.tx.on_ack(2, sack, 60 * kUs).new_holes);
  EXPECT_FALSE(s.tx.has_resend());
  // A second hole with fewer than 3 frames acked past it (6 lost, 7 arrived)
  // may still be reordering: not yet sent again.
  uint64_t later[2] = {0b1, 0};  // cum_ack 6 (2 repaired): bit 0 = seq 7 arrived, 6 missing
  const auto r2 = s.tx.on_ack(6, later, 70 * kUs);
  EXPECT_TRUE(r2.valid);
  EXPECT_FALSE(r2.new_holes);
  EXPECT_FALSE(s.tx.has_resend());
}

TEST(SendChannel, QueuedFrameThatArrivesAfterAllIsNotSentAgain) {
  RttParams p;
  p.initial_rto_ns = 100 * kUs;
  Sender s(8, p);
  for (uint32_t i = 0; i < 3; ++i) s.tx.push(1, i, 0);
  s.tx.on_timeout(100 * kUs);
  ASSERT_TRUE(s.tx.has_resend());
  uint64_t sack[2] = {0, 0};
  s.tx.on_ack(3, sack, 101 * kUs);  // they all arrived (late, not lost)
  EXPECT_FALSE(s.tx.has_resend());
  EXPECT_TRUE(s.tx.idle());
}

TEST(SendChannel, AbandonQueuesEveryUnackedFrame) {
  Sender s(8);
  for (uint32_t i = 0; i < 5; ++i) s.tx.push(7, i, 0);
  uint64_t sack[2] = {0b1, 0};  // seq 2 arrived
  s.tx.on_ack(1, sack, 10 * kUs);
  s.tx.abandon_in_flight(20 * kUs);
  std::vector<uint32_t> seqs;
  while (s.tx.has_resend()) {
    const uint32_t q = s.tx.resend_front();
    EXPECT_TRUE(s.tx.entry(q).flags & InFlight::kAbandoned);
    seqs.push_back(q);
    s.tx.resend_done(20 * kUs);
  }
  EXPECT_EQ(seqs, (std::vector<uint32_t>{1, 3, 4}));
}

// Randomised end-to-end check of the two halves: a lossy, reordering link in
// virtual time delivers every sequence number exactly once, with acks
// batched the way the node sends them (at once past a gap or on a duplicate,
// else every 8 frames or after a delay).
TEST(Channel, LossyReorderingLinkDeliversEverythingOnce) {
  const uint64_t seed = test_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (LANECAST_SEED replays)");
  std::mt19937_64 rng(seed);
  RttParams p;
  p.initial_rto_ns = 200 * kUs;
  p.min_rto_ns = 100 * kUs;
  Sender s(64, p);
  RecvChannel rx;
  struct InAir {
    uint64_t at;
    uint32_t seq;
    bool ack;
    wire::AckBody a;
  };
  std::vector<InAir> air, acks;
  std::multiset<uint32_t> delivered;
  const uint32_t total = 5000;
  uint32_t pushed = 0, unacked = 0;
  uint64_t now = 0, ack_due = UINT64_MAX;
  auto send_ack = [&] {
    if (rng() % 10 != 0) acks.push_back({now + 5 * kUs, 0, true, rx.make_ack(0)});
    unacked = 0;
    ack_due = UINT64_MAX;
  };
  for (int step = 0; step < 2'000'000 && (delivered.size() < total || !s.tx.idle()); ++step) {
    now += kUs;
    while (pushed < total && s.tx.window_open()) {
      const uint32_t seq = s.tx.push(1, pushed++, now);
      if (rng() % 10 != 0) air.push_back({now + 5 * kUs + rng() % (20 * kUs), seq, false, {}});
    }
    if (now >= s.tx.deadline()) s.tx.on_timeout(now);
    while (s.tx.has_resend()) {
      if (rng() % 10 != 0) air.push_back({now + 5 * kUs + rng() % (20 * kUs), s.tx.resend_front(), false, {}});
      s.tx.resend_done(now);
    }
    std::vector<InAir> later;
    for (auto& f : air) {
      if (f.at > now) {
        later.push_back(f);
        continue;
      }
      if (f.ack) {
        EXPECT_TRUE(s.tx.on_ack(f.a.cum_ack, f.a.sack, now).valid);
        continue;
      }
      if (rx.check(f.seq) == RecvChannel::Check::New) {
        const bool in_order = rx.accept(f.seq);
        delivered.insert(f.seq);
        if (!in_order || ++unacked >= 8) send_ack();
        else if (ack_due == UINT64_MAX) ack_due = now + 30 * kUs;
      } else {
        send_ack();
      }
    }
    if (now >= ack_due) send_ack();
    later.insert(later.end(), acks.begin(), acks.end());
    acks.clear();
    air.swap(later);
  }
  ASSERT_EQ(delivered.size(), total);
  for (uint32_t s2 = 0; s2 < total; ++s2) EXPECT_EQ(delivered.count(s2), 1u) << "seq " << s2;
  EXPECT_TRUE(s.tx.idle());
}

}  // namespace
}  // namespace lanecast::engine::reliable
