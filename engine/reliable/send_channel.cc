#include "engine/reliable/send_channel.h"

#include <algorithm>
#include <bit>
#include <stdexcept>

#include "engine/wire.h"

namespace lanecast::engine::reliable {

SendChannel::SendChannel(uint32_t window, const RttParams& rtt)
    : window_(window), rtt_(rtt), rto_ns_(rtt.initial_rto_ns), cwnd_(window), ssthresh_(window) {
  // The receiver describes at most 1 + kSackBits frames past its cumulative
  // ack, so a larger window could never be selectively acknowledged.
  if (window == 0 || window > wire::kSackBits + 1)
    throw std::invalid_argument("reliable window must be 1.." +
                                std::to_string(wire::kSackBits + 1) + " frames");
  const uint32_t size = std::bit_ceil(window);
  ring_.resize(size);
  mask_ = size - 1;
}

uint32_t SendChannel::push(uint32_t op, uint32_t segment, uint64_t now_ns, uint16_t lane, bool signal) {
  if (idle()) last_progress_ns_ = now_ns;
  const uint32_t seq = next_++;
  Entry& e = slot(seq);
  e = Entry{};
  e.segment = segment;
  e.op = op;
  e.sent_ns = now_ns;
  e.tries = 1;
  e.lane = lane;
  e.signal = signal;
  return seq;
}

// Backoff is the channel's: every timeout doubles rto_ns_ (collect_due), so a
// frame re-sent at time t is due again at t + the doubled RTO.
uint64_t SendChannel::backoff(uint16_t) const { return rto_ns_; }

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

uint32_t SendChannel::on_ack(uint32_t cum_ack, const uint64_t sack[2], uint64_t now_ns,
                             bool* valid) {
  // An ack may not acknowledge what was never sent.
  if (seq_before(next_, cum_ack)) {
    *valid = false;
    return 0;
  }
  *valid = true;
  uint32_t newly = 0;
  auto ack_one = [&](uint32_t s) {
    Entry& e = slot(s);
    if (e.acked) return;
    e.acked = true;
    ++newly;
    // Karn's rule: only frames sent once give an unambiguous sample.
    if (e.tries == 1 && now_ns >= e.sent_ns) sample_rtt(now_ns - e.sent_ns);
  };
  for (uint32_t s = base_; seq_before(s, cum_ack); ++s) ack_one(s);
  // Selective bits: bit i is cum_ack + 1 + i.
  uint32_t highest_sacked = cum_ack;
  bool any_sack = false;
  for (uint32_t i = 0; i < wire::kSackBits; ++i) {
    if (!(sack[i / 64] >> (i % 64) & 1)) continue;
    const uint32_t s = cum_ack + 1 + i;
    if (!seq_before(s, next_) || seq_before(s, base_)) continue;
    ack_one(s);
    highest_sacked = s;
    any_sack = true;
  }
  const uint32_t old_base = base_;
  while (base_ != next_ && slot(base_).acked) ++base_;
  if (base_ != old_base || newly > 0) last_progress_ns_ = now_ns;
  on_acked(newly);

  // Holes below frames acked well past them were lost, not late: retransmit
  // each such hole once without waiting for its timer.
  if (any_sack) {
    bool new_hole = false;
    for (uint32_t s = base_; seq_before(s, highest_sacked); ++s) {
      Entry& e = slot(s);
      if (e.acked || e.fast_done || e.tries != 1) continue;
      if (seq_distance(s, highest_sacked) < rtt_.fast_retransmit_after) continue;
      e.fast_done = true;
      fast_pending_ = true;
      new_hole = true;
    }
    if (new_hole) on_loss(/*timeout=*/false);
  }
  return newly;
}

void SendChannel::on_loss(bool timeout) {
  // Unlike TCP, even a timeout (when RttParams::shrink_on_timeout asks for
  // it) only halves instead of restarting from one frame.
  (void)timeout;
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


void SendChannel::abandon_in_flight(uint64_t now_ns) {
  for (uint32_t s = base_; s != next_; ++s) {
    Entry& e = slot(s);
    if (e.acked) continue;
    e.abandoned = true;
    e.resend_now = true;
  }
  last_progress_ns_ = now_ns;
  fast_pending_ = false;
}

}  // namespace lanecast::engine::reliable
