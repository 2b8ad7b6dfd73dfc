#include "engine/reliable/send_channel.h"

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <string>

namespace lanecast::engine::reliable {

namespace {

// 64 bits of a ring bitmap of mask + 1 bits starting at seq (bit i: seq + i),
// wrapping.
uint64_t ring_bits(const uint64_t* bm, uint32_t mask, uint32_t seq) {
  const uint32_t pos = seq & mask;
  const uint32_t words = (mask + 1) / 64;
  const uint32_t w = pos >> 6, o = pos & 63;
  const uint64_t lo = bm[w] >> o;
  if (o == 0) return lo;
  return lo | bm[(w + 1) % words] << (64 - o);
}

// The first seq in [from, to) whose bit is set; `to` if none. A few word
// operations over a window.
uint32_t first_set(const uint64_t* bm, uint32_t mask, uint32_t from, uint32_t to) {
  for (uint32_t s = from; s != to;) {
    const uint32_t span = std::min<uint32_t>(64, seq_distance(s, to));
    const uint64_t in_span = span == 64 ? ~uint64_t{0} : (uint64_t{1} << span) - 1;
    const uint64_t b = ring_bits(bm, mask, s) & in_span;
    if (b != 0) return s + static_cast<uint32_t>(std::countr_zero(b));
    s += span;
  }
  return to;
}

}  // namespace

SendChannel::SendChannel(uint32_t window, const RttParams& rtt)
    : mask_(flight_ring(window) - 1), window_(window), rtt_(rtt), rto_ns_(rtt.initial_rto_ns),
      cwnd_(window), ssthresh_(window) {
  // The receiver describes at most 1 + 128 frames past its cumulative ack, so
  // a larger window could never be selectively acknowledged.
  if (window == 0 || window > kMaxWindow)
    throw std::invalid_argument("reliable window must be 1.." + std::to_string(kMaxWindow) + " frames");
}

void SendChannel::set_acked(uint32_t seq) {
  const uint32_t pos = seq & mask_;
  const uint64_t bit = uint64_t{1} << (pos & 63);
  slab_->acked[pos >> 6] |= bit;
  if (slab_->resend[pos >> 6] & bit) {  // arrived after all: no need to send it again
    slab_->resend[pos >> 6] &= ~bit;
    --slab_->resend_count;
  }
}

void SendChannel::sample_rtt(uint64_t rtt) {
  // RFC 6298: srtt and rttvar with gains 1/8 and 1/4.
  if (srtt_ns_ == 0) {
    srtt_ns_ = rtt;
    rttvar_ns_ = rtt / 2;
  } else {
    const uint64_t err = rtt > srtt_ns_ ? rtt - srtt_ns_ : srtt_ns_ - rtt;
    rttvar_ns_ = (3 * rttvar_ns_ + err) / 4;
    srtt_ns_ = (7 * srtt_ns_ + rtt) / 8;
  }
  rto_ns_ = std::clamp<uint64_t>(srtt_ns_ + 4 * rttvar_ns_, rtt_.min_rto_ns, rtt_.max_rto_ns);
}

SendChannel::AckResult SendChannel::on_ack(uint32_t cum_ack, const uint64_t sack[2], uint64_t now_ns,
                                           bool duplicates, Arrival arrival) {
  AckResult r;
  // An ack may not acknowledge what was never sent.
  if (seq_before(next_, cum_ack)) {
    r.valid = false;
    return r;
  }
  // The copies the timer sent reported as duplicates after the silence
  // ended (idle or not by now).
  if (episode_ == Episode::kSettling) {
    if (now_ns > settle_until_ns_) episode_ = Episode::kNone;
    else if (duplicates) end_episode(r, true);
  }
  // An ack older than what we know (acks may overtake each other across
  // lanes of a switch) adds nothing; neither does one while idle.
  if (seq_before(cum_ack, base_)) {  // the receiver lacks what was acknowledged (or the ack is stale)
    behind_ = true;
    behind_cum_ = cum_ack;
    return r;
  }
  if (slab_ == nullptr) return r;

  // The RTT sample is taken from the oldest frame this ack newly covers, as
  // RFC 7323 (3.4) has TCP echo the earliest unacknowledged segment's
  // timestamp: with acks batched, the time a frame waits for its ack belongs
  // in the round trip the timer must outlast.
  // The newest frame it covers gives the path's round trip without the
  // wait for a batched ack: what a rate controller reads as queueing.
  uint32_t oldest = 0, newest = 0;
  bool any = false;
  bool late_original = false;  // a frame first sent before the silence's timeout, acked as sent
  auto take = [&](uint32_t s) {
    const InFlight& e = slot(s);
    if (episode_ == Episode::kSilent && e.tries == 1 && e.sent_ns < timed_out_ns_) late_original = true;
    set_acked(s);
    ++r.newly;
    r.newly_bytes += e.bytes;
    if (e.flags & InFlight::kStream) ++r.newly_stream;
    if (!any || seq_before(s, oldest)) oldest = s;
    if (!any || seq_before(newest, s)) newest = s;
    any = true;
  };
  // Cumulative part: every frame below cum_ack. base_ passes them below, so
  // each frame is visited here once in its life. The common case - no frame
  // of them acknowledged selectively before, none queued to go again, no
  // timeout to judge - needs no bit set only to be cleared below: base_
  // moves past them at once (a pipeline's acks, 16-32 frames each).
  const uint32_t old_base = base_;
  if (episode_ != Episode::kSilent && slab_->resend_count == 0 &&
      first_set(slab_->acked, mask_, base_, cum_ack) == cum_ack) {
    for (uint32_t s = base_; s != cum_ack; ++s) {
      const InFlight& e = slot(s);
      r.newly_bytes += e.bytes;
      r.newly_stream += (e.flags & InFlight::kStream) != 0;
    }
    if (cum_ack != base_) {
      r.newly = seq_distance(base_, cum_ack);
      oldest = base_;
      newest = cum_ack - 1;
      any = true;
      base_ = cum_ack;
    }
  } else {
    for (uint32_t s = base_; seq_before(s, cum_ack); ++s)
      if (!acked(s)) take(s);
  }
  // Selective part: bit i of sack is cum_ack + 1 + i; take only bits in
  // flight and not acked yet (word operations, then one step per new frame).
  uint32_t highest_sacked = 0;
  bool any_sack = false;
  for (uint32_t k = 0; k < 2; ++k) {
    const uint32_t start = cum_ack + 1 + 64 * k;
    if (!seq_before(start, next_)) break;
    const uint32_t room = seq_distance(start, next_);
    const uint64_t valid = room >= 64 ? ~uint64_t{0} : (uint64_t{1} << room) - 1;
    const uint64_t sacked = sack[k] & valid;
    if (sacked == 0) continue;
    highest_sacked = start + 63 - static_cast<uint32_t>(std::countl_zero(sacked));
    any_sack = true;
    for (uint64_t fresh = sacked & ~ring_bits(slab_->acked, mask_, start); fresh != 0; fresh &= fresh - 1)
      take(start + static_cast<uint32_t>(std::countr_zero(fresh)));
  }
  // Karn's rule: only a frame sent once gives an unambiguous sample.
  if (any && slot(oldest).tries == 1 && now_ns >= slot(oldest).sent_ns) sample_rtt(now_ns - slot(oldest).sent_ns);
  if (any && slot(newest).tries == 1 && now_ns >= slot(newest).sent_ns) {
    r.path_rtt_ns = std::max<uint64_t>(1, now_ns - slot(newest).sent_ns);
    // The one-way delay, when the ack echoes this very frame's arrival.
    if (arrival.rx_ns != 0 && arrival.seq == newest) {
      const uint64_t owd = arrival.rx_ns - slot(newest).sent_ns + (uint64_t{1} << 63);
      r.forward_queue_ns = owd - base_owd_.note(owd, now_ns);
    }
  }

  while (base_ != next_ && acked(base_)) clear_acked(base_++);
  if (base_ != old_base || r.newly > 0) {
    // A gap with a timeout in it says nothing of the path's pauses (the wait
    // was a loss, or ended by a retransmission): as Karn's rule for samples.
    // The receiver's pause is counted from the oldest frame it now answered
    // (if sent after the last progress): a frame the sender had only just
    // sent, after a silence of its own while an older one was lost, was
    // answered at once - that silence was the sender's, not a stall.
    if (timer_ns_ == last_progress_ns_) {
      const uint64_t from = any ? std::max(last_progress_ns_, slot(oldest).sent_ns) : last_progress_ns_;
      const uint64_t gap = now_ns > from ? now_ns - from : 0;
      ack_gap_ns_ = std::max(gap, ack_gap_ns_ - ack_gap_ns_ / 1024);
    }
    // The silence a timeout cut into ends here: spurious now, or perhaps
    // when the re-sent copies are reported (until a timeout from now).
    // The silence's timer pause is not learned as the receiver's (the gap
    // above skips it): an ack the timer's own copy drew out, its ack lost,
    // would double the timer at each such loss.
    if (episode_ == Episode::kSilent) {
      if (late_original || duplicates) {
        end_episode(r, true);
      } else {
        episode_ = Episode::kSettling;
        settle_until_ns_ = now_ns + timeout_ns();
      }
    }
    last_progress_ns_ = timer_ns_ = now_ns;
    behind_ = false;
  }
  on_acked(r.newly);

  // Holes below frames acked well past them were lost, not late: queue each
  // such hole once without waiting for the timer.
  if (any_sack && seq_distance(base_, highest_sacked) >= rtt_.fast_retransmit_after &&
      !seq_before(highest_sacked, base_)) {
    const uint32_t before = slab_->resend_count;
    queue_holes_below(highest_sacked - rtt_.fast_retransmit_after + 1);
    if (slab_->resend_count != before) {
      r.new_holes = true;
      on_hole();
    }
  }
  return r;
}

// Queues every unacked frame in [base_, limit) that has not had its fast
// retransmit, a bitmap word at a time.
void SendChannel::queue_holes_below(uint32_t limit) {
  for (uint32_t s = base_; seq_before(s, limit);) {
    const uint32_t span = std::min<uint32_t>(64, seq_distance(s, limit));
    const uint64_t mask = span == 64 ? ~uint64_t{0} : (uint64_t{1} << span) - 1;
    for (uint64_t holes = ~ring_bits(slab_->acked, mask_, s) & mask; holes != 0; holes &= holes - 1) {
      const uint32_t h = s + static_cast<uint32_t>(std::countr_zero(holes));
      InFlight& e = slot(h);
      if ((e.flags & InFlight::kFastDone) || e.tries != 1 || queued(h)) continue;
      e.flags |= InFlight::kFastDone;
      queue_resend(h);
    }
    s += span;
  }
}

void SendChannel::queue_resend(uint32_t seq) {
  const uint32_t pos = seq & mask_;
  const uint64_t bit = uint64_t{1} << (pos & 63);
  if (slab_->resend[pos >> 6] & bit) return;
  slab_->resend[pos >> 6] |= bit;
  ++slab_->resend_count;
}

uint32_t SendChannel::resend_front() const {
  // Bits are set only for unacked frames in flight, so one is found within
  // the window.
  const uint32_t s = first_set(slab_->resend, mask_, base_, next_);
  return s != next_ ? s : base_;  // base_: unreachable while has_resend()
}

void SendChannel::resend_done(uint64_t now_ns) {
  const uint32_t seq = resend_front();
  const uint32_t pos = seq & mask_;
  slab_->resend[pos >> 6] &= ~(uint64_t{1} << (pos & 63));
  --slab_->resend_count;
  InFlight& e = slot(seq);
  ++e.tries;
  e.sent_ns = now_ns;
}

uint32_t SendChannel::on_timeout(uint64_t now_ns) {
  uint32_t n = 0;
  for (uint32_t s = base_; s != next_ && n < kTimeoutBurst; ++s) {
    if (acked(s) || queued(s)) continue;
    queue_resend(s);
    ++n;
  }
  if (behind_ && !has_filler() && seq_before(behind_cum_, base_)) {
    fill_from_ = behind_cum_;
    fill_to_ = seq_distance(behind_cum_, base_) > kMaxWindow ? behind_cum_ + kMaxWindow : base_;
    n += seq_distance(fill_from_, fill_to_);
    behind_ = false;
  }
  rto_ns_ = std::min(rto_ns_ * 2, rtt_.max_rto_ns);
  timer_ns_ = now_ns;  // the timer restarts; the peer has still not answered
  if (episode_ != Episode::kSilent) {
    episode_ = Episode::kSilent;
    timed_out_ns_ = now_ns;
  }
  return n;
}

void SendChannel::on_hole() {
  ssthresh_ = std::max(kMinCwnd, std::min(cwnd_, in_flight()) / 2);
  cwnd_ = ssthresh_;
  acked_in_avoidance_ = 0;
}

void SendChannel::on_acked(uint32_t newly) {
  if (cwnd_ < ssthresh_) {
    cwnd_ = std::min({cwnd_ + newly, ssthresh_, window_});
    return;
  }
  acked_in_avoidance_ += newly;
  if (acked_in_avoidance_ >= cwnd_) {
    acked_in_avoidance_ -= cwnd_;
    cwnd_ = std::min(cwnd_ + 1, window_);
  }
}

void SendChannel::abandon_in_flight(uint64_t now_ns, bool streams_too) {
  for (uint32_t s = base_; s != next_; ++s) {
    if (acked(s) || (!streams_too && (slot(s).flags & InFlight::kStream))) continue;
    slot(s).flags |= InFlight::kAbandoned;
    queue_resend(s);
  }
  last_progress_ns_ = timer_ns_ = now_ns;
  episode_ = Episode::kNone;
}

}  // namespace lanecast::engine::reliable
