// One lane's sending rate, found from what the network says rather than
// told: a delay-based controller in the family of TIMELY (Mittal et al.,
// SIGCOMM 2015) and Swift (Kumar et al., SIGCOMM 2020), with loss as the
// last resort signal as in TCP.
//
// Signals, per lane (every channel of the lane feeds it):
//   - the queueing delay an ack reveals: the one-way delay of the newest
//     frame it covers (the receiver's clock at its arrival, echoed, less
//     this sender's at its departure) less the least seen lately on that
//     channel (SendChannel::AckResult::forward_queue_ns), and never more
//     than its round trip (path_rtt_ns: not the wait for a batched ack) less
//     the least round trip seen lately. A queue building anywhere on the way
//     there - this member's own uplink, a switch port a receiver shares -
//     shows here first, before anything is dropped; the queue on the way
//     back, the receiver's own uplink, does not (on_rtt());
//   - a loss: a hole an ack reveals, or a retransmission timeout.
// Response, at most once per round (about one RTT): while the delay stays
// under the target, the rate grows - doubling until a queue (two rounds
// over the target: slow start, whose first cut goes down to what the acks
// delivered), then by a fixed step; above the target it
// falls in proportion to how far above (at most by a quarter) - from the second
// round over it on, one alone is a stalled core's, and a round lower than
// the one before waits once for its queue to drain - and a loss cuts it by
// 30%; after a cut it climbs back towards the rate it had by a quarter of
// the way per round. A round whose window was full and that used less than
// its rate brings the rate down towards what the acks let it send - the
// most of the last rounds (follow_acks()).
// The rate stays within [floor, ceiling]: the ceiling is a port_rate_mbit
// the group was given, or the port's speed.
//
// Why delay and not only loss: a sender that waits for drops keeps every
// queue on its path full - on a host with a 1000-frame NIC queue that is
// 60 ms at 200 Mbit/s, and a window of 128 frames then carries 3 MB/s.
// Pure: no clock, no DPDK - time is an argument, so the tests drive it with
// a model of a link.
#pragma once

#include <algorithm>
#include <cstdint>

#include "engine/reliable/windowed_min.h"

namespace lanecast::engine::reliable {

class RateControl {
 public:
  struct Params {
    uint64_t ceiling_bps = 10'000'000'000;
    uint64_t floor_bps = 10'000'000;
    uint64_t start_bps = 100'000'000;
    // Queueing delay tolerated (the round's least: see on_rtt). On 8 member
    // processes sharing 2 CPUs 0.5-2 ms all carried 0.87-0.95 of the line.
    uint64_t target_delay_ns = 1'000'000;
    uint64_t step_bps = 0;                 // additive increase per round; 0: ceiling / 1024 (at least 1 Mbit/s)
    uint64_t base_window_ns = 2'000'000'000;  // the base RTT is the least seen within this
    // A queue this controller did not build: after standing_rounds rounds
    // over the target, each of which cut the rate, the queue is someone
    // else's (or delay the path adds that no rate removes) - the target
    // moves to that queue plus target_delay_ns, at most max_target_delay_ns
    // - until the delay has been under target_delay_ns for as many rounds.
    uint32_t standing_rounds = 6;
    uint64_t max_target_delay_ns = 50'000'000;
    // While competing the rate grows as a TCP flow's would: a frame per
    // round trip.
    uint32_t frame_bytes = 1514;
  };

  explicit RateControl(const Params& p)
      : p_(p), rate_bps_(std::clamp(p.start_bps, p.floor_bps, p.ceiling_bps)),
        step_bps_(p.step_bps ? p.step_bps : std::max<uint64_t>(1'000'000, p.ceiling_bps / 1024)) {}

  uint64_t rate_bps() const { return rate_bps_; }
  uint64_t base_rtt_ns() const { return base_.least(); }
  bool slow_start() const { return slow_start_; }
  // Whether it competes with a queue it did not build (Params::standing_rounds).
  bool competing() const { return target_ns_ != p_.target_delay_ns; }
  uint64_t target_delay_ns() const { return target_ns_; }

  // Bytes the lane sent (frames the pacer let go). A round that sent less
  // than 80% of its rate raises nothing: a rate nobody uses says nothing
  // about the path, and one grown while the window or a busy core limited
  // the sender (five to seven times the link's on the shaped testbed, a
  // pacer that still held frames back at each burst's end) floods the path
  // the moment the window opens (RFC 7661's point for TCP's window).
  // `unacked`: of them, the bytes of datagrams (multicast copies), which no
  // ack will ever cover.
  void on_sent(uint64_t bytes, uint64_t unacked = 0) {
    round_sent_ += bytes;
    round_unacked_ += unacked;
  }
  // Bytes an ack newly acknowledged: what the path delivered (standing()).
  void on_acked(uint64_t bytes) { round_acked_ += bytes; }
  // A channel of the lane had frames to send and its window was full: acks,
  // not the pacer, held the lane back this round (see follow_acks()).
  void on_window_full() { window_full_ = true; }
  // The last change on_rtt() reported came from follow_acks(), not a queue.
  bool followed_acks() const { return followed_acks_; }

  static constexpr uint64_t kNoForwardQueue = UINT64_MAX;
  // An RTT sample (an ack of a frame sent once) and, when the ack said when
  // the frame arrived, the queue on the way there (forward_queue_ns: see
  // SendChannel::AckResult). Returns whether the rate changed.
  bool on_rtt(uint64_t rtt_ns, uint64_t now_ns, uint64_t forward_queue_ns = kNoForwardQueue) {
    const uint64_t base = base_.note(rtt_ns, now_ns);
    srtt_ns_ = srtt_ns_ == 0 ? rtt_ns : (7 * srtt_ns_ + rtt_ns) / 8;
    // The queue is the forward path's alone where the ack tells it: an ack
    // comes back on the receiver's uplink, behind what the receiver itself
    // sends - a forwarder's whole output - so the round trip holds the
    // receiver's queue too, one no rate of this sender's drains (LEDBAT
    // measures one-way delay for this reason, RFC 6817).
    // The round trip's queue still bounds it: two clocks that drift apart
    // move the one-way figure by as much as they drifted since its base was
    // taken (microseconds at tens of ppm), and a forged echo by any amount.
    const uint64_t q = std::min(rtt_ns > base ? rtt_ns - base : 0, forward_queue_ns);
    // The round's least delay decides: a standing queue delays every frame
    // of the round, a stalled core (a late ack) only some.
    round_delay_ns_ = std::min(round_delay_ns_, q);
    if (now_ns < round_end_ns_) return false;
    const uint64_t before = rate_bps_;
    // One round over the target waits for the next: a core that did not run
    // for a few milliseconds (its own, reading every ack of the stall late;
    // on 8 processes sharing 2 CPUs, every few rounds) makes one round's
    // least delay as high as a queue's, and the next round is back at the
    // base - a queue the rate built is still there. Without the wait each
    // stall cut the rate, and at 1000 Mbit/s the lanes spent most of a
    // broadcast climbing back (a step per round). In slow start too: a
    // group's first rounds carry its members' start (8 processes coming up
    // on 2 CPUs), and a cut there ended slow start at 80-100 Mbit/s - the
    // root's lane of a 1 MiB run then climbed a step a round for 70 of its
    // 300 ms before it carried what the CPUs let through.
    const bool over = round_delay_ns_ > target_ns_;
    const bool first_over = over && !last_over_;
    last_over_ = over;
    if (first_over) {
      end_round(now_ns);
      return false;
    }
    followed_acks_ = false;
    if (round_delay_ns_ <= target_ns_) {
      if (in_use(now_ns)) rate_bps_ = slow_start_ ? 2 * rate_bps_ : rate_bps_ + increase();
      else if (window_full_) follow_acks(now_ns);
      over_rounds_ = 0;
      episode_delay_ns_ = 0;
      held_ = false;
      // The queue it competed with is gone once the delay stays low.
      if (competing() && round_delay_ns_ <= p_.target_delay_ns && ++under_rounds_ >= p_.standing_rounds) {
        target_ns_ = p_.target_delay_ns;
        under_rounds_ = 0;
      }
    } else if (!held_ && falling()) {
      // Over the target but lower than the round before: the queue drains
      // already, and a cut's effect shows a round after it. A second cut in
      // a row before that shows took the rate far under the link: on 8
      // member processes at 200 Mbit/s the root's cuts went on while its
      // queue drained, down to 0.6 of the line, and the found rate carried
      // 0.98 of the told one (with the wait 0.995). One round waits, not
      // more, so a queue that drains slowly is still cut and empties: the
      // least RTT (the base) is seen again - waiting as long as the delay
      // fell kept 0.3-0.9 ms of queue standing in the link model, and the
      // base grew by as much.
      held_ = true;
    } else {
      held_ = false;
      if (standing(now_ns)) {
        // Rounds of cuts did not bring the delay down (a queue this sender built drains when it
        // cuts, if others build it too they cut too): not this sender's queue. A sender that keeps
        // yielding to it - to TCP filling a switch port, to a core that answers late - ends with
        // nothing (Copa's competitive mode, Arun and Balakrishnan, NSDI 2018, for the same reason);
        // it now tolerates that queue and contends on loss, as TCP does, until the queue goes. The
        // cuts that moved nothing are undone: on 8 member processes sharing 2 CPUs a forwarder
        // whose receiver's core did not run cut from 370 to 22 Mbit/s within 60 ms against 4 ms of
        // delay that no rate of its own changed, and then climbed a step per round.
        slow_start_ = false;
        target_ns_ = std::min(p_.max_target_delay_ns, round_delay_ns_ + p_.target_delay_ns);
        rate_bps_ = std::max(rate_bps_, episode_rate_bps_);
        over_rounds_ = 0;
        under_rounds_ = 0;
        episode_delay_ns_ = 0;
      } else {
        const bool leaving_slow_start = slow_start_;
        slow_start_ = false;
        under_rounds_ = 0;
        // Down in proportion to the excess, at most a quarter per round: deeper cuts drained the
        // queue and left the link idle (at most half: 0.87-0.90 of the line on the shaped testbed;
        // a quarter: 0.93-0.97).
        const double excess =
            static_cast<double>(round_delay_ns_ - target_ns_) / static_cast<double>(round_delay_ns_);
        last_cut_from_bps_ = rate_bps_;
        undo_ = Undo{};  // a queue now: a timeout's cut stays
        rate_bps_ =
            static_cast<uint64_t>(static_cast<double>(rate_bps_) * (1.0 - std::min(0.25, 0.25 * excess)));
        if (leaving_slow_start) drain_overshoot(now_ns);
      }
    }
    end_round(now_ns);
    return rate_bps_ != before;
  }

  // A loss (a hole, a timeout): once per round.
  bool on_loss(uint64_t now_ns) {
    undo_ = Undo{};  // another loss: an earlier timeout's cut stays
    const uint64_t before = rate_bps_;
    cut_for_loss(now_ns);
    return rate_bps_ != before;
  }

  // A retransmission timeout: a loss, whose cut (if it made this round's)
  // is kept to be undone should the timeout prove spurious.
  bool on_timeout(uint64_t now_ns) {
    const Undo before{rate_bps_, slow_start_};
    undo_ = Undo{};
    if (cut_for_loss(now_ns)) undo_ = before;
    return rate_bps_ != before.rate_bps;
  }

  // The last timeout proved spurious (SendChannel::AckResult::
  // spurious_timeout): nothing was lost, a core or its acks were late. Its
  // cut is undone, unless another loss or a queue cut the rate since (as
  // TCP undoes a cut that DSACK or timestamps show was needless, RFC 3708
  // and RFC 4015). Returns whether the rate changed.
  bool on_spurious_timeout() {
    if (undo_.rate_bps == 0) return false;
    const uint64_t before = rate_bps_;
    rate_bps_ = std::clamp(std::max(rate_bps_, undo_.rate_bps), p_.floor_bps, p_.ceiling_bps);
    slow_start_ = undo_.slow_start;
    loss_round_end_ns_ = 0;
    undo_ = Undo{};
    return rate_bps_ != before;
  }

 private:
  // A loss ends slow start and cuts the rate by 30%, once per round.
  // Returns whether it cut (the round's first loss).
  bool cut_for_loss(uint64_t now_ns) {
    slow_start_ = false;
    if (now_ns < loss_round_end_ns_) return false;
    last_cut_from_bps_ = rate_bps_;
    rate_bps_ = rate_bps_ / 10 * 7;
    end_round(now_ns);
    loss_round_end_ns_ = round_end_ns_;
    return true;
  }

  // A round under the target: back towards the rate of the last cut by a
  // quarter of the way per round, then on by the step (CUBIC's concave
  // approach to the window of its last loss, Ha, Rhee & Xu 2008). On
  // shared CPUs many cuts are for the host, not the path: an ack comes
  // later than the timer while the receiving core does not run, with no
  // frame dropped. Climbing back by the step alone would spend tens of
  // rounds below the rate the path carries after each such cut.
  uint64_t increase() const {
    const uint64_t s = step();
    if (rate_bps_ >= last_cut_from_bps_) return s;
    return std::max(s, (last_cut_from_bps_ - rate_bps_) / 4);
  }

  // The additive increase: the fixed step alone; while competing, what a
  // TCP flow on the same path adds, a frame per round trip.
  uint64_t step() const {
    if (!competing() || srtt_ns_ == 0) return step_bps_;
    return std::max<uint64_t>(1, uint64_t{p_.frame_bytes} * 8 * 1'000'000'000 / srtt_ns_);
  }

  // A round over the target: whether it is the (standing_rounds + 1)-th of
  // an episode - rounds over the target in a row - whose cuts brought the
  // delay no lower than three quarters of where the episode began (a
  // queue this sender built drains by more within a round or two of its
  // cuts; a stalled receiver's or another sender's moves up and down by
  // tens of percent whatever the rate). Notes the rate the episode, or
  // the last fall that counted, began at: the cuts before it worked.
  // Rounds whose rate is still over a quarter above the most the path
  // delivered in any of the last kSentRounds rounds count for nothing: the
  // queue grows because this sender sends more than gets through, and its
  // cuts have not yet taken it under the link - as after slow start
  // (drain_overshoot()). Counted, they made a root on 8 member processes
  // at 200 Mbit/s take its own 20-60 ms queue for another's and tolerate it
  // for a second: eight broadcasts of 1 MiB at a third of the line, every
  // one with timeouts.
  bool standing(uint64_t now_ns) {
    const double delivered = delivered_bps(now_ns);
    if (static_cast<double>(rate_bps_) * 4 > delivered * 5) {
      episode_delay_ns_ = 0;
      over_rounds_ = 0;
      return false;
    }
    if (episode_delay_ns_ == 0 || round_delay_ns_ * 4 < episode_delay_ns_ * 3) {
      episode_rate_bps_ = rate_bps_;
      episode_delay_ns_ = round_delay_ns_;
      over_rounds_ = 0;
    }
    return ++over_rounds_ > p_.standing_rounds;
  }

  // Slow start ends over the link, by as much as the delay lagged: a root
  // on 8 member processes at 200 Mbit/s doubled to 1600 Mbit/s, and a
  // quarter a round, each round as long as the round trip its own queue
  // made (tens of milliseconds), took seven rounds to come under the link.
  // So the first cut goes down to what the acks delivered, the most of the
  // last rounds - the path's rate while the queue built (BBR leaves its
  // startup the same way, pacing under the delivery rate until the queue it
  // made is gone; Cardwell et al. 2016) - and the climb after it aims no
  // higher: the rate slow start reached was never the path's.
  // What the acks delivered says nothing of the path when most of what the
  // lane sent were datagrams no ack covers (mcast_chain's multicasts: a root
  // whose acks came for its few signals left slow start at the floor, 10
  // Mbit/s, and climbed a step per broadcast); the quarter's cut stands.
  void drain_overshoot(uint64_t now_ns) {
    const auto delivered = static_cast<uint64_t>(delivered_bps(now_ns));
    if (delivered == 0 || delivered >= rate_bps_) return;  // no acks to go by, or under them already
    if (round_unacked_ * 2 > round_sent_) return;
    rate_bps_ = delivered;
    last_cut_from_bps_ = delivered;
  }

  // The round's least delay is at least an eighth under the round
  // before's: the queue drains (TIMELY's sign of the gradient, Mittal et
  // al. 2015).
  bool falling() const { return prev_delay_ns_ != UINT64_MAX && round_delay_ns_ * 8 < prev_delay_ns_ * 7; }

  // The round sent at least 80% of the rate.
  bool in_use(uint64_t now_ns) const { return sent_bps(now_ns) >= 0.8 * static_cast<double>(rate_bps_); }
  // `bytes` over this round so far, bits/s.
  double round_bps(uint64_t bytes, uint64_t now_ns) const {
    const uint64_t elapsed = now_ns - round_start_ns_;
    return elapsed > 0 ? static_cast<double>(bytes) * 8e9 / static_cast<double>(elapsed) : 0;
  }
  // What the lane sent this round, bits/s.
  double sent_bps(uint64_t now_ns) const { return round_bps(round_sent_, now_ns); }

  // A round under the target that used less than 80% of the rate while a
  // window was full: the acks paced the lane, and what it sent is what its
  // receivers took. A rate above that is one no ack clock backs: each time
  // the acks of a stalled receiver come at once (or a core of its own
  // resumes), the pacer lets a burst at that rate into the queue the window
  // already holds - and the round's least delay does not show that queue,
  // for the window bounds it (128 frames at 1000 Mbit/s: 1.5 ms, about the
  // target). On 8 member processes sharing 2 CPUs, 1000 Mbit/s links, slow
  // start ran the root to 3 Gbit/s and forwarders sat at 1.1-1.7 Gbit/s;
  // capped at the link, a found rate carried 0.94-1.0 of the told one,
  // uncapped 0.88. So the rate falls towards 9/8 of what the round sent, a
  // quarter at most per round, and slow start ends - as TCP lowers a window
  // that the acks do not validate (RFC 7661) and BBR paces at the rate the
  // acks deliver (Cardwell et al., ACM Queue 2016). What the round sent is
  // the most any of the last kSentRounds sent, as BBR's bottleneck rate is
  // the most delivered over its last ten rounds: a receiver whose core did
  // not run sends a round's acks late, and one such round cut the rate by a
  // quarter - a chain's rank 1 at 1000 Mbit/s, 8 processes, followed its
  // acks 9 times in a 1 MiB run and paced between 350 and 500 Mbit/s, where
  // told the rate it let each stall's burst go at the link's.
  void follow_acks(uint64_t now_ns) {
    if (now_ns == round_start_ns_) return;
    slow_start_ = false;
    const auto backed = static_cast<uint64_t>(std::max(sent_bps(now_ns), recent_sent_max()) * 9 / 8);
    const uint64_t next = std::min(rate_bps_, std::max(rate_bps_ / 4 * 3, backed));
    followed_acks_ = next != rate_bps_;
    rate_bps_ = next;
  }

  // The most any of the last kSentRounds rounds sent, bits/s.
  double recent_sent_max() const { return most_of(recent_sent_bps_); }
  // The most any of the last kSentRounds rounds acknowledged, bits/s.
  double recent_acked_max() const { return most_of(recent_acked_bps_); }
  // The most of a window of kSentRounds rounds' rates.
  static double most_of(const double* rounds) { return *std::max_element(rounds, rounds + kSentRounds); }
  // What acks acknowledged this round, bits/s.
  double acked_bps(uint64_t now_ns) const { return round_bps(round_acked_, now_ns); }
  // What the path delivered: the most acknowledged this round or in any of
  // the last kSentRounds, bits/s (standing(), drain_overshoot()).
  double delivered_bps(uint64_t now_ns) const {
    return std::max(acked_bps(now_ns), recent_acked_max());
  }

  void end_round(uint64_t now_ns) {
    if (now_ns > round_start_ns_) {
      const uint32_t slot = round_index_++ % kSentRounds;
      recent_sent_bps_[slot] = sent_bps(now_ns);
      recent_acked_bps_[slot] = acked_bps(now_ns);
    }
    rate_bps_ = std::clamp(rate_bps_, p_.floor_bps, p_.ceiling_bps);
    prev_delay_ns_ = round_delay_ns_;
    round_sent_ = 0;
    round_unacked_ = 0;
    round_acked_ = 0;
    window_full_ = false;
    round_start_ns_ = now_ns;
    round_delay_ns_ = UINT64_MAX;
    // A round: one smoothed RTT, at least the target (samples closer than
    // that are the same queue seen twice).
    round_end_ns_ = now_ns + std::max(srtt_ns_, p_.target_delay_ns);
  }
  Params p_;
  uint64_t rate_bps_;
  uint64_t step_bps_;
  bool slow_start_ = true;
  uint64_t srtt_ns_ = 0;
  uint64_t round_delay_ns_ = UINT64_MAX;
  uint64_t prev_delay_ns_ = UINT64_MAX;  // the round before's least delay (falling())
  uint64_t round_end_ns_ = 0;
  uint64_t target_ns_ = p_.target_delay_ns;
  uint32_t over_rounds_ = 0, under_rounds_ = 0;  // in a row: over the target and not falling; under the default
  uint64_t episode_delay_ns_ = 0;                // the delay the rounds over the target began at (0: under it)
  uint64_t episode_rate_bps_ = 0;                // the rate then (standing())
  bool window_full_ = false;                     // on_window_full() this round
  bool followed_acks_ = false;                   // the last round's change was follow_acks()'s
  bool last_over_ = false;                       // the last round was over the target
  bool held_ = false;                            // the last round over the target waited (falling())
  uint64_t last_cut_from_bps_ = 0;               // the rate before the last cut (delay or loss)
  uint64_t round_sent_ = 0, round_start_ns_ = 0;  // bytes sent this round (on_sent), since when
  uint64_t round_unacked_ = 0;                    // ... of them datagrams
  uint64_t loss_round_end_ns_ = 0;
  static constexpr uint32_t kSentRounds = 8;
  double recent_sent_bps_[kSentRounds] = {};  // what the last rounds sent, bits/s (follow_acks())
  double recent_acked_bps_[kSentRounds] = {};  // what their acks acknowledged, bits/s (standing())
  uint64_t round_acked_ = 0;                   // bytes acknowledged this round (on_acked)
  uint32_t round_index_ = 0;
  // The last timeout's cut, to undo should the timeout prove spurious.
  struct Undo {
    uint64_t rate_bps = 0;  // the rate before it (0: nothing to undo)
    bool slow_start = false;
  };
  Undo undo_;
  WindowedMin<uint64_t> base_{p_.base_window_ns};  // the least RTT lately
};

}  // namespace lanecast::engine::reliable
