// The sending half of a reliable channel to one peer: sequence numbers, a
// bounded window of frames in flight, cumulative + selective acks, retransmit
// on timeout with exponential backoff, and one fast retransmit per hole once
// later frames are acked. Pure bookkeeping: no mbufs, no clock (time is an
// argument), no allocation after construction.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "engine/reliable/seq.h"

namespace lanecast::engine::reliable {

struct RttParams {
  uint64_t initial_rto_ns = 1'000'000;  // before any sample
  uint64_t min_rto_ns = 200'000;
  uint64_t max_rto_ns = 50'000'000;
  uint32_t fast_retransmit_after = 3;   // acked frames beyond a hole
  // Whether a timeout also halves the congestion window. Off by default: on
  // polling cores shared by many nodes (or by other programs) most timeouts
  // are a descheduled receiver, and halving on them collapsed throughput
  // (16 MiB chain on the fabric: 36 ms -> 170+ ms); holes the selective acks
  // reveal still halve it, and timeouts still back off the RTO.
  bool shrink_on_timeout = false;
};

class SendChannel {
 public:
  struct Entry {
    uint32_t segment = 0;
    uint32_t op = 0;
    uint64_t sent_ns = 0;
    uint16_t tries = 0;       // transmissions so far
    uint16_t lane = 0;        // the lane the machine chose for it
    bool fast_done = false;   // fast retransmit already used for this hole
    bool acked = false;
    bool abandoned = false;   // its broadcast failed: re-sent without payload
    bool resend_now = false;  // abandoned and not yet re-sent as such
    bool signal = false;      // a machine's signal: `segment` is its tag, no payload
  };

  SendChannel(uint32_t window, const RttParams& rtt);

  // Room for a new frame: within the receive window and the congestion window.
  bool window_open() const { return seq_distance(base_, next_) < std::min(window_, cwnd_); }
  uint32_t cwnd() const { return cwnd_; }
  bool idle() const { return base_ == next_; }
  uint32_t in_flight() const { return seq_distance(base_, next_); }
  uint32_t window() const { return window_; }
  uint32_t next_seq() const { return next_; }

  // Records a first transmission and returns its sequence number.
  // Precondition: window_open().
  uint32_t push(uint32_t op, uint32_t segment, uint64_t now_ns, uint16_t lane = 0, bool signal = false);

  // Applies an ack. Returns the number of frames newly acknowledged.
  // Acks for sequence numbers never sent are ignored (and counted by caller
  // through the return of false in `valid`).
  uint32_t on_ack(uint32_t cum_ack, const uint64_t sack[2], uint64_t now_ns, bool* valid);

  // Calls retransmit(seq, entry) for frames due again: every hole the
  // receiver's selective acks reported (fast retransmit), and at most
  // kTimeoutBurst frames whose timer expired — a timeout means the path is
  // congested or gone, and re-sending the whole window would only deepen it.
  // retransmit() returns false when it could not queue the frame (tx full);
  // the frame then stays due. Returns how many were queued.
  template <typename F>
  uint32_t collect_due(uint64_t now_ns, F&& retransmit) {
    uint32_t n = 0, timeouts = 0;
    bool blocked = false;
    for (uint32_t s = base_; s != next_; ++s) {
      Entry& e = slot(s);
      if (e.acked) continue;
      // Holes the receiver reported, and frames just abandoned, go at once
      // and are not timeouts.
      const bool fast = (fast_pending_ && e.fast_done && e.tries == 1) || e.resend_now;
      if (!fast) {
        if (now_ns < e.sent_ns + backoff(e.tries)) continue;
        if (timeouts == kTimeoutBurst) continue;
      }
      if (!retransmit(s, static_cast<const Entry&>(e))) {
        blocked = true;
        break;
      }
      if (!fast) ++timeouts;
      e.resend_now = false;
      e.tries++;
      e.sent_ns = now_ns;
      ++n;
    }
    if (!blocked) fast_pending_ = false;
    if (timeouts > 0) {
      // RFC 6298 5.5: a timeout doubles the RTO until a fresh sample arrives
      // (Karn's rule would otherwise keep a too-short RTO forever); and the
      // congestion window halves.
      rto_ns_ = std::min(rto_ns_ * 2, rtt_.max_rto_ns);
      if (rtt_.shrink_on_timeout) on_loss(/*timeout=*/true);
    }
    return n;
  }

  // Last time an ack moved the window, or the first send after idle.
  uint64_t last_progress_ns() const { return last_progress_ns_; }
  uint64_t rto_ns() const { return rto_ns_; }
  // The broadcast these frames belong to failed and its data is gone. They stay
  // in flight, due at once, to be re-sent as payload-less "abandoned" frames
  // that the receiver acknowledges and drops: the channel's sequence space
  // stays in step with the receiver's window, so the group remains usable.
  void abandon_in_flight(uint64_t now_ns);

 private:
  Entry& slot(uint32_t seq) { return ring_[seq & mask_]; }
  const Entry& slot(uint32_t seq) const { return ring_[seq & mask_]; }
  uint64_t backoff(uint16_t tries) const;
  void sample_rtt(uint64_t rtt_ns);

  std::vector<Entry> ring_;
  uint32_t mask_;
  uint32_t window_;
  uint32_t base_ = 0;   // oldest unacked
  uint32_t next_ = 0;   // next to send
  RttParams rtt_;
  uint64_t srtt_ns_ = 0;
  uint64_t rttvar_ns_ = 0;
  uint64_t rto_ns_;
  uint64_t last_progress_ns_ = 0;
  bool fast_pending_ = false;
  // Congestion control after TCP Reno (RFC 5681): slow start up to ssthresh,
  // then one frame per window of acks; a hole or a timeout halves the window.
  // The receive window caps it.
  void on_loss(bool timeout);
  void on_acked(uint32_t newly);
  uint32_t cwnd_;
  uint32_t ssthresh_;
  uint32_t acked_in_avoidance_ = 0;

  static constexpr uint32_t kTimeoutBurst = 4;
  static constexpr uint32_t kMinCwnd = 4;
};

}  // namespace lanecast::engine::reliable
