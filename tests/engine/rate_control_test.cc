// A lane's rate controller (engine/reliable/rate_control.h), alone, against
// a model of a bottleneck: a link of capacity C behind a FIFO of a given
// depth, a base RTT, one RTT sample per 50 us of virtual time (a sender with
// frames in flight hears acks that often). What it must do: find C from
// below and hold near it with a short queue, lose nothing once it has found
// it on a host-deep queue, follow C when it changes, never pass its ceiling,
// and back off on loss.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "engine/reliable/rate_control.h"

namespace lanecast::engine::reliable {
namespace {

constexpr uint64_t kUs = 1000, kMs = 1'000'000, kS = 1'000'000'000;

struct Link {
  double capacity_bps;
  double queue_limit_bytes;
  uint64_t base_rtt_ns;
  double queue_bytes = 0;
  uint64_t drops = 0;
  // `dt` ns at `rate`: what the link carried.
  double run(double rate_bps, uint64_t dt) {
    const double in = rate_bps / 8 * static_cast<double>(dt) / 1e9;
    const double out_max = capacity_bps / 8 * static_cast<double>(dt) / 1e9;
    queue_bytes += in;
    const double out = std::min(queue_bytes, out_max);
    queue_bytes -= out;
    if (queue_bytes > queue_limit_bytes) {
      queue_bytes = queue_limit_bytes;
      ++drops;
    }
    return out;
  }
  uint64_t rtt_ns() const { return base_rtt_ns + static_cast<uint64_t>(queue_bytes * 8 / capacity_bps * 1e9); }
};

// An RTT sample of a sender with a backlog, one per 50 us: it sent at its
// rate since the last one, and the acks acknowledged `acked` bytes (< 0: as
// much as it sent).
bool sample(RateControl& rc, uint64_t rtt_ns, uint64_t now, double acked = -1) {
  const uint64_t sent = rc.rate_bps() / 8 * 50 * kUs / kS;
  rc.on_sent(sent);
  rc.on_acked(acked < 0 ? sent : static_cast<uint64_t>(acked));
  return rc.on_rtt(rtt_ns, now);
}

// Samples of a quiet path (300 us) from `now` on, the lane sending at its
// rate, until slow start took the rate to `bps`.
void slow_start_to(RateControl& rc, uint64_t bps, uint64_t& now) {
  while (rc.rate_bps() < bps)
    for (int i = 0; i < 20; ++i, now += 50 * kUs) sample(rc, 300 * kUs, now);
}

struct Outcome {
  double share;          // carried / capacity over the last second
  double mean_delay_ms;  // queueing delay over the last second
  uint64_t drops_late;   // drops in the last second
};

Outcome drive(RateControl& rc, Link& l, uint64_t seconds, uint64_t from_ns = 0, bool lossy_signals = true) {
  constexpr uint64_t dt = 50 * kUs;
  double carried = 0, delay_sum = 0;
  uint64_t samples = 0, drops_before = 0;
  const uint64_t end = from_ns + seconds * kS, last_second = end - kS;
  for (uint64_t now = from_ns; now < end; now += dt) {
    if (now == last_second) drops_before = l.drops;
    const uint64_t drops = l.drops;
    const double out = l.run(static_cast<double>(rc.rate_bps()), dt);
    if (now >= last_second) {
      carried += out;
      delay_sum += static_cast<double>(l.rtt_ns() - l.base_rtt_ns) / 1e6;
      ++samples;
    }
    if (lossy_signals && l.drops != drops) rc.on_loss(now);
    sample(rc, l.rtt_ns(), now, out);
  }
  return {carried * 8 / l.capacity_bps, delay_sum / static_cast<double>(samples), l.drops - drops_before};
}

RateControl::Params params(uint64_t ceiling_bps) {
  RateControl::Params p;
  p.ceiling_bps = ceiling_bps;
  return p;
}

TEST(RateControl, FindsTheBottleneckFromBelowAndHoldsItWithAShortQueue) {
  // 200 Mbit/s behind a host NIC's 1000-frame queue, 200 us base RTT; the
  // sender knows only that its port does 10 Gbit/s.
  Link l{200e6, 1000 * 1514.0, 200 * kUs};
  RateControl rc(params(10'000'000'000));
  const Outcome o = drive(rc, l, 5);
  EXPECT_GE(o.share, 0.95) << "rate " << rc.rate_bps();
  EXPECT_LE(o.mean_delay_ms, 2.0);
  EXPECT_EQ(o.drops_late, 0u);
  EXPECT_EQ(rc.base_rtt_ns(), 200 * kUs);
}

TEST(RateControl, OnAShallowQueueItLosesLittleAndStillCarriesTheLine) {
  // A switch port's 5 ms at 200 Mbit/s: 125 kB.
  Link l{200e6, 125'000, 300 * kUs};
  RateControl rc(params(10'000'000'000));
  const Outcome o = drive(rc, l, 5);
  EXPECT_GE(o.share, 0.9);
  EXPECT_EQ(o.drops_late, 0u);
}

TEST(RateControl, FollowsTheLinkWhenItsCapacityChanges) {
  Link l{400e6, 1000 * 1514.0, 200 * kUs};
  RateControl rc(params(1'000'000'000));
  EXPECT_GE(drive(rc, l, 4).share, 0.95);
  l.capacity_bps = 100e6;  // another job took most of it
  const Outcome down = drive(rc, l, 4, 4 * kS);
  EXPECT_GE(down.share, 0.95);
  EXPECT_LE(down.mean_delay_ms, 3.0);
  EXPECT_LE(rc.rate_bps(), 130'000'000u);
  l.capacity_bps = 400e6;  // and gave it back
  EXPECT_GE(drive(rc, l, 6, 8 * kS).share, 0.9);
}

TEST(RateControl, NeverPassesItsCeilingNorFallsBelowItsFloor) {
  Link fast{1e9, 1e6, 100 * kUs};
  RateControl rc(params(300'000'000));
  drive(rc, fast, 2);
  EXPECT_EQ(rc.rate_bps(), 300'000'000u) << "the link has room: the ceiling (a port_rate_mbit) holds";
  for (uint64_t t = 3 * kS; t < 4 * kS; t += kMs) rc.on_loss(t);
  EXPECT_EQ(rc.rate_bps(), RateControl::Params{}.floor_bps);
}

TEST(RateControl, ALossCutsOncePerRoundAndEndsSlowStart) {
  RateControl rc(params(10'000'000'000));
  sample(rc, 500 * kUs, 0);
  EXPECT_TRUE(rc.slow_start());
  const uint64_t before = rc.rate_bps();
  EXPECT_TRUE(rc.on_loss(10 * kMs));
  EXPECT_EQ(rc.rate_bps(), before / 10 * 7);
  EXPECT_FALSE(rc.on_loss(10 * kMs + 100 * kUs)) << "the same round's losses are one event";
  EXPECT_FALSE(rc.slow_start());
}

TEST(RateControl, LateAcksOfAStalledCoreAreNotAQueueAStandingQueueIs) {
  // Every fourth ack 3 ms late (its receiver's core was busy elsewhere):
  // no queue, the rate grows to the ceiling.
  RateControl noisy(params(1'000'000'000));
  for (uint64_t i = 0, now = 0; now < 2 * kS; ++i, now += 50 * kUs) sample(noisy, i % 4 == 3 ? 3200 * kUs : 200 * kUs, now);
  EXPECT_EQ(noisy.rate_bps(), 1'000'000'000u);
  // Every ack 3 ms late whatever the rate (a queue another sender keeps):
  // it yields first, and when its cuts move nothing, it stops yielding to
  // that queue and contends for the link on loss (competing).
  RateControl queued(params(1'000'000'000));
  for (uint64_t now = 0; now < 100 * kMs; now += 50 * kUs) sample(queued, 200 * kUs, now);
  const uint64_t found = queued.rate_bps();
  uint64_t least = found;
  for (uint64_t now = 100 * kMs; now < 300 * kMs; now += 50 * kUs) {
    sample(queued, 3200 * kUs, now);
    least = std::min(least, queued.rate_bps());
  }
  EXPECT_LT(least, found / 2) << "it yields to a queue first";
  EXPECT_TRUE(queued.competing());
  EXPECT_EQ(queued.target_delay_ns(), 4 * kMs) << "the queue it found plus its own target";
  // The queue goes: back to a short target after as many quiet rounds.
  for (uint64_t now = 300 * kMs; now < 400 * kMs; now += 50 * kUs) sample(queued, 200 * kUs, now);
  EXPECT_FALSE(queued.competing());
}

// A core that did not run for a while (8 member processes share 2 CPUs)
// reads every ack of the stall late: one round's least delay is a queue's,
// the next is back at the base. One round over the target waits for the
// next; a rate that cut for each stall spent its broadcasts climbing back.
TEST(RateControl, OneRoundOfLateAcksCutsNothing) {
  RateControl rc(params(1'000'000'000));
  uint64_t least = UINT64_MAX;
  for (uint64_t now = 0; now < 2 * kS; now += 50 * kUs) {
    const bool stalled = now % (20 * kMs) < 2000 * kUs;  // 2 ms of every 20
    sample(rc, stalled ? 3200 * kUs : 200 * kUs, now);
    if (now > 200 * kMs) least = std::min(least, rc.rate_bps());
  }
  EXPECT_EQ(least, 1'000'000'000u) << "a stall cut the rate";
}

// A cut shows a round later: while the queue it left drains, the next
// round's delay is still over the target, only lower. That round waits; a
// cut there too took the rate far under the link (on 8 member processes at
// 200 Mbit/s the root's troughs were 0.6 of the line). One sample a round
// (10 ms apart: longer than any RTT here), 200 us of base.
TEST(RateControl, ARoundWhoseQueueDrainsWaitsForTheNextBeforeCuttingAgain) {
  RateControl rc(params(1'000'000'000));
  const auto round = [&rc](uint64_t i, uint64_t delay_ns) {
    const uint64_t bytes = rc.rate_bps() / 8 / 100;  // the round's 10 ms at its rate, every byte acknowledged
    rc.on_sent(bytes);
    rc.on_acked(bytes);
    return rc.on_rtt(200 * kUs + delay_ns, i * 10 * kMs);
  };
  round(0, 0);
  EXPECT_FALSE(round(1, 3 * kMs)) << "one round over the target: a stall, maybe";
  EXPECT_TRUE(round(2, 3 * kMs)) << "slow start ends at a queue that stays";
  EXPECT_FALSE(rc.slow_start());
  const uint64_t first = rc.rate_bps();
  EXPECT_TRUE(round(3, 3 * kMs)) << "a queue that does not drain is cut again";
  const uint64_t cut = rc.rate_bps();
  EXPECT_LT(cut, first);
  EXPECT_FALSE(round(4, 2 * kMs)) << "the queue drains (a third lower): it waits";
  EXPECT_EQ(rc.rate_bps(), cut);
  EXPECT_TRUE(round(5, 1500 * kUs)) << "falling again, but one round waits, not two";
  EXPECT_LT(rc.rate_bps(), cut);
  EXPECT_TRUE(round(6, 1400 * kUs)) << "a drain this slow is cut";
}

// A group's first rounds carry its members' start: one round whose acks
// all came late does not end slow start.
TEST(RateControl, OneLateRoundDoesNotEndSlowStart) {
  RateControl rc(params(10'000'000'000));
  uint64_t now = 0;
  const auto ms_of = [&](uint64_t delay_ns, int ms) {
    for (int i = 0; i < 20 * ms; ++i, now += 50 * kUs) sample(rc, 200 * kUs + delay_ns, now);
  };
  ms_of(0, 3);
  const uint64_t before = rc.rate_bps();
  ms_of(4 * kMs, 2);  // every ack of two milliseconds (a round and more) 4 ms late
  ms_of(0, 10);
  EXPECT_TRUE(rc.slow_start());
  EXPECT_GE(rc.rate_bps(), 8 * before) << "still doubling";
}

// A lane that sends mostly datagrams (mcast_chain's multicasts, a stream's
// multicast batches) hears acks for a sliver of its bytes: the cut that ends
// slow start cannot go by what the acks delivered - it took mcast_chain's
// root to the floor (10 Mbit/s) at the first queue - and cuts a quarter.
TEST(RateControl, SlowStartOfALaneOfDatagramsEndsByAQuarterNotAtItsAcks) {
  for (const bool datagrams : {false, true}) {
    RateControl rc(params(10'000'000'000));
    uint64_t now = 0;
    // Every ack covers a fiftieth of what went out: the rest were
    // datagrams, or (the case the cut is for) never got through.
    const auto sample_with = [&](uint64_t rtt_ns) {
      const uint64_t sent = rc.rate_bps() / 8 * 50 * kUs / kS;
      rc.on_sent(sent, datagrams ? sent - sent / 50 : 0);
      rc.on_acked(sent / 50);
      rc.on_rtt(rtt_ns, now);
      now += 50 * kUs;
    };
    while (rc.rate_bps() < 800'000'000) sample_with(300 * kUs);
    const uint64_t peak = rc.rate_bps();
    while (rc.slow_start()) {  // the queue shows: rounds of 3 ms (the first waits)
      sample_with(300 * kUs + 3 * kMs);
      ASSERT_LT(now, kS);
    }
    if (datagrams)
      EXPECT_GE(rc.rate_bps(), peak / 2) << "a lane of datagrams left slow start at what its acks covered";
    else
      EXPECT_LE(rc.rate_bps(), peak / 10) << "a lane of acknowledged frames goes down to what the acks delivered";
  }
}

// Against the link model, the waits keep the link busier: the troughs of
// the saw stay nearer the capacity, and the base is still seen (the queue
// empties), so the delay stays short.
TEST(RateControl, CutsThatWaitForTheDrainKeepTheLinkBusy) {
  for (const double capacity : {200e6, 1e9}) {
    Link l{capacity, 1000 * 1514.0, 200 * kUs};
    RateControl rc(params(10'000'000'000));
    const Outcome o = drive(rc, l, 5);
    EXPECT_GE(o.share, 0.99) << capacity;  // cutting every round over the target: 0.987, 0.978
    EXPECT_LE(o.mean_delay_ms, 2.0) << capacity;
    EXPECT_EQ(rc.base_rtt_ns(), 200 * kUs) << capacity;
  }
}

// A receiver whose core runs late for tens of milliseconds: 3.6-4.4 ms of
// delay, up and down by a fifth every few rounds, whatever this sender's
// rate. Its cuts move nothing; after the standing rounds they are undone
// and the sender competes with that delay. Counting only rounds in which
// the delay did not fall by a tenth from the last, a fall of a fifth
// every 20 ms restarted the count: on the testbed (8 processes on 2 CPUs,
// 1000 Mbit/s) a forwarder went from 370 to 22 Mbit/s in 60 ms.
TEST(RateControl, CutsThatMovedNoDelayAreUndone) {
  RateControl rc(params(1'000'000'000));
  for (uint64_t now = 0; now < 100 * kMs; now += 50 * kUs) sample(rc, 200 * kUs, now);
  const uint64_t found = rc.rate_bps();
  ASSERT_EQ(found, 1'000'000'000u);
  uint64_t least = found;
  for (uint64_t now = 100 * kMs; now < 400 * kMs; now += 50 * kUs) {
    const bool high = (now / (10 * kMs)) % 2 == 0;
    sample(rc, (high ? 4400 : 3600) * kUs, now);
    least = std::min(least, rc.rate_bps());
  }
  EXPECT_LT(least, found / 2) << "it yields to the delay first";
  EXPECT_TRUE(rc.competing());
  EXPECT_GE(rc.rate_bps(), found * 9 / 10) << "the cuts that moved nothing stay";
}

// A loss the path did not cause (a retransmission timer that fired while
// the receiving core did not run: no link dropped a frame) cuts the rate;
// it climbs back to where it was within a few rounds, not by the step alone
// (1 Mbit/s a round here: 300 rounds).
TEST(RateControl, AfterACutItClimbsBackToTheRateItHadWithinAFewRounds) {
  Link fast{10e9, 1e7, 200 * kUs};
  RateControl rc(params(1'000'000'000));
  drive(rc, fast, 1);
  ASSERT_EQ(rc.rate_bps(), 1'000'000'000u);
  rc.on_loss(1 * kS);
  ASSERT_EQ(rc.rate_bps(), 700'000'000u);
  for (uint64_t now = 1 * kS + 1; now < 1 * kS + 20 * kMs; now += 50 * kUs) sample(rc, 200 * kUs, now);
  EXPECT_GE(rc.rate_bps(), 950'000'000u) << "20 ms after the cut";
  // ... and beyond it by the step only: one cut and its climb back, not a
  // run to the ceiling.
  RateControl probe(params(10'000'000'000));
  Link l{200e6, 1000 * 1514.0, 200 * kUs};
  drive(probe, l, 3);
  const uint64_t found = probe.rate_bps();
  probe.on_loss(3 * kS);
  uint64_t most = 0;
  for (uint64_t now = 3 * kS + 1, i = 0; i < 200; ++i, now += 50 * kUs) {
    sample(probe, 200 * kUs, now);  // a quiet path: nothing holds it back
    most = std::max(most, probe.rate_bps());
  }
  EXPECT_LE(most, found + 10 * 10'000'000) << "after 10 ms";
}

// A timeout that proves spurious (its frames arrived late: a receiving
// core that did not run) gives its cut back at once - unless another loss or
// a queue cut the rate since. A hole's cut is never undone.
TEST(RateControl, ASpuriousTimeoutsCutIsUndone) {
  Link fast{10e9, 1e7, 200 * kUs};
  RateControl rc(params(1'000'000'000));
  drive(rc, fast, 1);
  ASSERT_EQ(rc.rate_bps(), 1'000'000'000u);
  ASSERT_TRUE(rc.on_timeout(1 * kS));
  ASSERT_EQ(rc.rate_bps(), 700'000'000u);
  EXPECT_TRUE(rc.on_spurious_timeout());
  EXPECT_EQ(rc.rate_bps(), 1'000'000'000u);
  EXPECT_FALSE(rc.on_spurious_timeout()) << "undone once";
  // A real loss after the undo still cuts (the loss round was reset).
  EXPECT_TRUE(rc.on_loss(1 * kS + 100 * kUs));
  EXPECT_EQ(rc.rate_bps(), 700'000'000u);
  EXPECT_FALSE(rc.on_spurious_timeout()) << "a hole's cut is not a timeout's";

  RateControl both(params(1'000'000'000));
  drive(both, fast, 1);
  ASSERT_TRUE(both.on_timeout(1 * kS));
  both.on_loss(1 * kS + 10 * kUs);  // a hole in the same round: a loss after all
  EXPECT_FALSE(both.on_spurious_timeout());
  EXPECT_EQ(both.rate_bps(), 700'000'000u);

  // Slow start interrupted by a spurious timeout resumes.
  RateControl early(params(10'000'000'000));
  sample(early, 200 * kUs, 0);
  ASSERT_TRUE(early.slow_start());
  early.on_timeout(2 * kMs);
  ASSERT_FALSE(early.slow_start());
  early.on_spurious_timeout();
  EXPECT_TRUE(early.slow_start());
}

TEST(RateControl, ARateNobodyUsesDoesNotGrow) {
  // The window (or the application) limits the sender to a third of its
  // rate: a quiet path raises nothing.
  RateControl rc(params(10'000'000'000));
  const uint64_t start = rc.rate_bps();
  for (uint64_t now = 0; now < kS; now += 50 * kUs) {
    rc.on_sent(rc.rate_bps() / 3 / 8 * 50 * kUs / kS);
    rc.on_rtt(300 * kUs, now);
  }
  EXPECT_EQ(rc.rate_bps(), start);
  for (uint64_t now = kS; now < kS + 3 * kMs; now += 50 * kUs) sample(rc, 300 * kUs, now);
  EXPECT_GT(rc.rate_bps(), start) << "sending at its rate: it grows";
}

// A sender whose window bounds what it has in flight: 64 frames on a
// 1 Gbit/s link with a 200 us base RTT hold at most 0.58 ms of queue, under
// the delay target, so the delay alone never says the rate is too high.
// `hear_window` says whether the controller is told when the window was
// full. Returns the share of the link carried over the last second.
double drive_window_bound(RateControl& rc, Link& l, double window_bytes, bool hear_window) {
  constexpr uint64_t dt = 50 * kUs;
  double carried = 0;
  for (uint64_t now = 0; now < 3 * kS; now += dt) {
    const double want = static_cast<double>(rc.rate_bps()) / 8 * static_cast<double>(dt) / 1e9;
    const double on_wire = l.capacity_bps / 8 * static_cast<double>(l.base_rtt_ns) / 1e9;
    const double room = std::max(0.0, window_bytes - l.queue_bytes - on_wire);
    const double sent = std::min(want, room);
    const double out = l.run(sent * 8 * 1e9 / static_cast<double>(dt), dt);
    if (now >= 2 * kS) carried += out;
    rc.on_sent(static_cast<uint64_t>(sent));
    if (hear_window && want > room) rc.on_window_full();
    rc.on_rtt(l.rtt_ns(), now);
  }
  return carried * 8 / l.capacity_bps;
}

TEST(RateControl, AFullWindowBringsTheRateDownToWhatTheAcksLetGo) {
  const double window = 64 * 1514.0;
  Link blind_link{1e9, 1000 * 1514.0, 200 * kUs};
  RateControl blind(params(10'000'000'000));
  drive_window_bound(blind, blind_link, window, false);
  EXPECT_GE(blind.rate_bps(), 1'500'000'000u) << "without the window's word slow start overshoots, and stays";

  Link l{1e9, 1000 * 1514.0, 200 * kUs};
  RateControl rc(params(10'000'000'000));
  const double share = drive_window_bound(rc, l, window, true);
  EXPECT_FALSE(rc.slow_start());
  // Between 9/8 of what the acks let go (where a full window brings it)
  // and 5/4 (past that no round counts as using its rate, so none raises it).
  EXPECT_LE(rc.rate_bps(), 1'250'000'000u);
  EXPECT_GE(rc.rate_bps(), 900'000'000u);
  EXPECT_GE(share, 0.95) << "the link stays busy";
}

TEST(RateControl, AFullWindowCutsAtMostAQuarterPerRoundAndNothingWhenTheRateIsUsed) {
  RateControl rc(params(10'000'000'000));
  uint64_t now = 0;
  slow_start_to(rc, 1'600'000'000, now);
  // A full window while the rate is used: the acks kept up - no cut.
  const uint64_t used = rc.rate_bps();
  for (int i = 0; i < 40; ++i, now += 50 * kUs) {
    rc.on_window_full();
    rc.on_sent(used / 8 * 50 * kUs / kS);
    rc.on_rtt(300 * kUs, now);
  }
  EXPECT_GE(rc.rate_bps(), used);
  // The acks now let a tenth of it go: down, a quarter at most per round.
  uint64_t last = rc.rate_bps();
  bool followed = false;
  for (int i = 0; i < 400; ++i, now += 50 * kUs) {
    rc.on_window_full();
    rc.on_sent(used / 10 / 8 * 50 * kUs / kS);
    if (rc.on_rtt(300 * kUs, now)) {
      EXPECT_GE(rc.rate_bps(), last / 4 * 3);
      followed = followed || rc.followed_acks();
    }
    last = rc.rate_bps();
  }
  EXPECT_TRUE(followed);
  EXPECT_FALSE(rc.slow_start());
  EXPECT_LE(rc.rate_bps(), used / 10 * 2);
}

// A sender whose acks let 800 Mbit/s go, window full: one round in which a
// receiver's core did not run (its acks came after the round, a tenth went)
// is not what the acks let go. The rate follows the most any of the last
// rounds sent; a stall that lasts is followed.
TEST(RateControl, OneStalledRoundDoesNotBringTheRateDown) {
  RateControl rc(params(10'000'000'000));
  uint64_t now = 0;
  const auto round = [&](uint64_t sent_bps) {
    for (int i = 0; i < 20; ++i, now += 50 * kUs) {
      rc.on_window_full();
      rc.on_sent(sent_bps / 8 * 50 * kUs / kS);
      rc.on_rtt(300 * kUs, now);
    }
  };
  slow_start_to(rc, 1'600'000'000, now);
  for (int i = 0; i < 20; ++i) round(800'000'000);
  // Between 9/8 of what the acks let go and 5/4 (past that no round uses
  // 80% of the rate, so none raises it).
  EXPECT_GE(rc.rate_bps(), 900'000'000u);
  EXPECT_LE(rc.rate_bps(), 1'000'000'000u);
  round(80'000'000);
  round(800'000'000);
  EXPECT_GE(rc.rate_bps(), 900'000'000u) << "one stalled round: still 9/8 of what the acks let go";
  for (int i = 0; i < 20; ++i) round(80'000'000);
  EXPECT_LE(rc.rate_bps(), 100'000'000u) << "a stall that lasts";
}

// Slow start overshoots: the delay shows a round after the rate doubled,
// and a sender whose samples come late (8 member processes on 2 CPUs) sees
// it later still - a root went to 1600 Mbit/s on a 200 Mbit/s link. Its
// cuts, a quarter a round, take seven or more rounds to come under the
// link, and the queue grows through them: its own, not another's, and not
// to be tolerated (Params::standing_rounds). Taken for another's, it stood
// for good here (a 60 ms queue, the rate back at 3.2 Gbit/s). And the cut
// that ends slow start goes down to what the acks delivered at once
// (RateControl::drain_overshoot()), so the queue drains sooner.
TEST(RateControl, AQueueItsOwnOvershootBuiltIsNotTakenForAnothers) {
  Link l{200e6, 1000 * 1514.0, 200 * kUs};
  RateControl::Params p = params(10'000'000'000);
  p.start_bps = 1'600'000'000;
  RateControl rc(p);
  bool competed = false;
  uint64_t drained_at = 0;  // when the queue was first under 1 ms again
  constexpr uint64_t dt = 50 * kUs;
  for (uint64_t now = 0; now < 2 * kS; now += dt) {
    const double out = l.run(static_cast<double>(rc.rate_bps()), dt);
    sample(rc, l.rtt_ns(), now, out);
    competed = competed || rc.competing();
    if (drained_at == 0 && now > 10 * kMs && l.rtt_ns() - l.base_rtt_ns < kMs) drained_at = now;
  }
  EXPECT_FALSE(competed) << "target " << rc.target_delay_ns() / kUs << " us";
  // Its first cut goes down to what the acks delivered: the 60 ms queue is
  // gone within 0.4 s (cutting a quarter a round, in 0.85 s).
  EXPECT_GT(drained_at, 0u);
  EXPECT_LE(drained_at, 400 * kMs);
  const Outcome o = drive(rc, l, 3, 2 * kS);
  EXPECT_GE(o.share, 0.95);
  EXPECT_LE(o.mean_delay_ms, 2.0);
}

TEST(RateControl, TheBaseRttFollowsALongerPath) {
  Link l{200e6, 1000 * 1514.0, 100 * kUs};
  RateControl rc(params(10'000'000'000));
  drive(rc, l, 3);
  EXPECT_EQ(rc.base_rtt_ns(), 100 * kUs);
  l.base_rtt_ns = 2 * kMs;  // rerouted: every sample is 1.9 ms longer, no queue
  const Outcome o = drive(rc, l, 8, 3 * kS);
  EXPECT_EQ(rc.base_rtt_ns(), 2 * kMs) << "learned within two windows";
  EXPECT_GE(o.share, 0.9) << "a longer path is not a queue";
}

// A chain of forwarders, each behind its own uplink (200 Mbit/s, a host
// NIC's 1000 frames): the root sends what it likes, a forwarder what it
// has received and not yet sent. A sender's acks come back on its
// receiver's uplink, behind what that receiver forwards, so a sender's
// round trip holds its receiver's queue too - one no rate of its own
// drains. For `stall` ns of every `stall_every` the senders' core does not
// run: it sends nothing and reads no ack (the links go on). Returns the
// share of the line the last member received over the last two of
// `seconds`.
double chain_share(uint32_t forwarders, bool told_forward_queue, uint64_t stall_every, uint64_t stall,
                   uint64_t seconds = 5) {
  const uint32_t senders = forwarders + 1;
  std::vector<Link> up(senders, Link{200e6, 1000 * 1514.0, 100 * kUs});
  std::vector<RateControl> rc(senders, RateControl(params(10'000'000'000)));
  std::vector<double> held(senders, 0);  // bytes received, not yet sent (the root: unbounded)
  constexpr uint64_t dt = 50 * kUs;
  double got = 0;
  const uint64_t end = seconds * kS, last = end - 2 * kS;
  for (uint64_t now = 0; now < end; now += dt) {
    const bool stalled = stall_every != 0 && now % stall_every < stall;
    for (uint32_t i = 0; i < senders; ++i) {
      if (stalled) {  // the core sends nothing and reads no ack; the links go on
        const double out = up[i].run(0, dt);
        if (i + 1 < senders) held[i + 1] += out;
        else if (now >= last) got += out;
        continue;
      }
      const double allowed = static_cast<double>(rc[i].rate_bps()) / 8 * static_cast<double>(dt) / 1e9;
      const double sent = i == 0 ? allowed : std::min(allowed, held[i]);
      if (i != 0) held[i] -= sent;
      rc[i].on_sent(static_cast<uint64_t>(sent));
      const uint64_t drops = up[i].drops;
      const double out = up[i].run(sent * 8e9 / static_cast<double>(dt), dt);
      rc[i].on_acked(static_cast<uint64_t>(out));
      if (up[i].drops != drops) rc[i].on_loss(now);
      if (i + 1 < senders) held[i + 1] += out;
      else if (now >= last) got += out;
    }
    for (uint32_t i = 0; i < senders && !stalled; ++i) {
      const uint64_t there = up[i].rtt_ns() - up[i].base_rtt_ns;
      const uint64_t back = i + 1 < senders ? up[i + 1].rtt_ns() - up[i + 1].base_rtt_ns : 0;
      rc[i].on_rtt(up[i].rtt_ns() + back, now, told_forward_queue ? there : RateControl::kNoForwardQueue);
    }
  }
  return got * 8 / (200e6 * 2);
}

// Told the queue on the way there (the one-way delay its acks echo), each
// sender of a chain holds its link while one core serves the forwarders and
// stops 2 ms in 20 (they get frames in bursts then, and send them at their
// rate, over the link's when nothing used it lately); judging by the round
// trip alone, a sender cuts for its receiver's queue too and the chain
// carries about 0.92 of the line. In one process over 8 shaped ports a
// chain's or a binary tree's forwarders did, and a broadcast now and then
// took a quarter longer than the line's time.
TEST(RateControl, AQueueOnTheWayBackIsNotThisSendersToDrain) {
  for (uint32_t forwarders : {1u, 3u, 6u}) {
    const double with = chain_share(forwarders, true, 20 * kMs, 2 * kMs);
    EXPECT_GE(with, 0.95) << forwarders << " forwarders; judged by the round trip alone: "
                          << chain_share(forwarders, false, 20 * kMs, 2 * kMs);
  }
}

// A TCP-like flow on the same link: window-based and clocked by its acks
// (it sends a window per round trip, queue included), it ignores delay,
// grows its window a segment per round trip and on a loss keeps `beta` of it
// (Reno 0.5, CUBIC 0.7). On a queue much deeper than the path's
// bandwidth-delay product even its cut window keeps the queue part full:
// the delay a delay-based sender waits for never comes. The two share the
// FIFO's output in proportion to what each put in; a tail drop is a loss
// for both.
struct LossBasedFlow {
  double window_bytes;
  double beta;
  uint64_t next_round = 0, quiet_until = 0;
  static constexpr double kSegment = 1448;
  double rate_bps(uint64_t rtt_ns) const { return window_bytes * 8 / (static_cast<double>(rtt_ns) / 1e9); }
  void tick(uint64_t now, uint64_t rtt_ns, bool dropped) {
    if (dropped && now >= quiet_until) {
      window_bytes = std::max(2 * kSegment, window_bytes * beta);
      quiet_until = now + rtt_ns;
    } else if (now >= next_round) {
      window_bytes += kSegment;
      next_round = now + rtt_ns;
    }
  }
};

struct Shares {
  double ours, theirs;
};

Shares compete(RateControl& rc, LossBasedFlow& tcp, Link& l, uint64_t seconds) {
  constexpr uint64_t dt = 50 * kUs;
  double ours = 0, theirs = 0;
  const uint64_t end = seconds * kS, last = end - 2 * kS;
  for (uint64_t now = 0; now < end; now += dt) {
    const double a = static_cast<double>(rc.rate_bps()), b = tcp.rate_bps(l.rtt_ns());
    const uint64_t drops = l.drops;
    const double out = l.run(a + b, dt);
    const bool dropped = l.drops != drops;
    if (now >= last) {
      ours += out * a / (a + b);
      theirs += out * b / (a + b);
    }
    tcp.tick(now, l.rtt_ns(), dropped);
    if (dropped) rc.on_loss(now);
    sample(rc, l.rtt_ns(), now, out * a / (a + b));
  }
  const double capacity = l.capacity_bps / 8 * 2;  // bytes in the last two seconds
  return {ours / capacity, theirs / capacity};
}

TEST(RateControl, HoldsItsShareBesideAFlowThatFillsTheQueue) {
  // A switch port's 5 ms at 200 Mbit/s (125 kB: 17 times the path's
  // bandwidth-delay product): a controller that only yields to delay ends
  // with little beside TCP (here 0.16 of the link beside Reno; on the
  // testbed 0.05 beside Linux's CUBIC). This model's TCP is weaker than
  // Linux's (no pacing, no CUBIC growth): tests/bench/fair_share.sh on the
  // testbed is the check that both get a fair share; this one checks that
  // the controller does not yield the link.
  for (const double beta : {0.5, 0.7}) {
    Link l{200e6, 125'000, 300 * kUs};
    RateControl rc(params(10'000'000'000));
    LossBasedFlow tcp{64 * 1448.0, beta};
    const Shares s = compete(rc, tcp, l, 12);
    EXPECT_GE(s.ours, 0.3) << "beta " << beta << ", theirs " << s.theirs;
    EXPECT_GE(s.theirs, 0.2) << "beta " << beta << ", ours " << s.ours;
  }
}

TEST(RateControl, TwoControllersSplitALinkAndKeepItsQueueShort) {
  Link l{200e6, 1000 * 1514.0, 200 * kUs};
  RateControl a(params(10'000'000'000)), b(params(10'000'000'000));
  constexpr uint64_t dt = 50 * kUs;
  double got_a = 0, got_b = 0, delay = 0;
  uint64_t samples = 0;
  for (uint64_t now = 0; now < 10 * kS; now += dt) {
    // b starts a second later, when a holds the whole link.
    const double ra = static_cast<double>(a.rate_bps()), rb = now >= kS ? static_cast<double>(b.rate_bps()) : 0;
    const uint64_t drops = l.drops;
    const double out = l.run(ra + rb, dt);
    if (now >= 8 * kS) {
      got_a += out * ra / (ra + rb), got_b += out * rb / (ra + rb);
      delay += static_cast<double>(l.rtt_ns() - l.base_rtt_ns) / 1e6;
      ++samples;
    }
    if (l.drops != drops) a.on_loss(now), b.on_loss(now);
    sample(a, l.rtt_ns(), now, out * ra / (ra + rb));
    if (now >= kS) sample(b, l.rtt_ns(), now, out * rb / (ra + rb));
  }
  const double capacity = l.capacity_bps / 8 * 2;
  EXPECT_GE(got_a / capacity, 0.4) << "b " << got_b / capacity;
  EXPECT_GE(got_b / capacity, 0.4) << "a " << got_a / capacity;
  // Both controllers' delay targets are 1 ms; a round's lag between a cut
  // and its effect leaves a saw whose mean over 8-10 s moves between 2.2 and
  // 3.4 ms with the second sender's start (0.5-3 s; without the wait in
  // slow start 2.5-3.2 ms, over 3 at four of ten starts). Either one
  // taking the other's queue for one it did not build would move its
  // target up by that queue (Params::standing_rounds), and the mean with
  // it.
  EXPECT_LE(delay / static_cast<double>(samples), 4.0) << "two delay-based senders need no standing queue";
}

}  // namespace
}  // namespace lanecast::engine::reliable
