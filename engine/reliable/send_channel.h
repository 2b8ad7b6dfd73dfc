// The sending half of a reliable channel to one peer on one lane: sequence
// numbers, a bounded window of frames in flight, cumulative + selective acks,
// one retransmission timer per channel, and one fast retransmit per hole.
// Pure bookkeeping: no mbufs, no clock (time is an argument), no allocation.
//
// The retransmission timer is the channel's, as in TCP (RFC 6298 5.1-5.3): it
// runs while anything is in flight and restarts whenever an ack acknowledges
// something new. A frame is re-sent on timeout only when the peer has
// acknowledged nothing for a whole RTO - not because that one frame waited
// long behind others in a queue. (A timer per frame, as lanecast had first,
// re-sent 30-60% of symmetric's frames on a shaped network with no loss at
// all: frames deep in a 5 ms switch queue outlived an RTO learned on an empty
// one.) Losses while acks flow are found from the selective acks instead: a
// hole with `fast_retransmit_after` later frames acknowledged is re-sent once.
//
// Work per ack is bounded by what it newly acknowledges plus a few word
// operations over the window's bitmaps (never a walk over every frame in
// flight), and the timer is one deadline per channel.
#pragma once

#include <algorithm>
#include <cstdint>

#include "engine/reliable/flight_pool.h"
#include "engine/reliable/seq.h"
#include "engine/reliable/windowed_min.h"

namespace lanecast::engine::reliable {

struct RttParams {
  // Before any sample: long enough for a queue or a stalled core (RFC 6298
  // takes 1 s; a channel's first frames rarely meet loss, and SACK repairs
  // all but the last of them).
  uint64_t initial_rto_ns = 10'000'000;
  // Floor of the RTO. Acks are delayed (up to NodeConfig::ack_delay_ns) and
  // polling cores are shared, so a quiet millisecond is not yet loss.
  uint64_t min_rto_ns = 1'000'000;
  uint64_t max_rto_ns = 200'000'000;
  uint32_t fast_retransmit_after = 3;   // acked frames beyond a hole
  // The base one-way delay (AckResult::forward_queue_ns) is the least seen
  // within this: as a rate controller's base RTT, and short enough that two
  // hosts' clocks drifting apart (tens of ppm) move it by tens of
  // microseconds at most.
  uint64_t base_window_ns = 2'000'000'000;
};

// When the newest data frame arrived at the receiver, by its clock, as its
// ack echoes it (wire::AckBody::newest_seq, newest_rx_ns; rx_ns 0: none).
struct Arrival {
  uint32_t seq = 0;
  uint64_t rx_ns = 0;
};

class SendChannel {
 public:
  // window: 1..kMaxWindow frames in flight.
  SendChannel(uint32_t window, const RttParams& rtt);

  static constexpr uint32_t kMaxWindow = 129;  // what one ack's 128 sack bits describe

  // --- the slab of frames in flight (flight_pool.h)
  FlightSlab* slab() const { return slab_; }
  void attach(FlightSlab* s) { slab_ = s; }
  // Precondition: idle(). Returns the slab to give back.
  FlightSlab* detach() {
    FlightSlab* s = slab_;
    slab_ = nullptr;
    return s;
  }

  bool idle() const { return base_ == next_; }
  uint32_t in_flight() const { return seq_distance(base_, next_); }
  // Room for one more frame: a slab, and within both windows.
  bool window_open() const { return window_room() > 0; }
  // Frames that may go before the window closes (0 without a slab).
  uint32_t window_room() const {
    const uint32_t w = std::min(window_, cwnd_), f = in_flight();
    return slab_ != nullptr && f < w ? w - f : 0;
  }
  // Whether sending one more frame fills the window (the frame then asks for
  // an ack at once, so the window reopens without waiting for a delayed ack).
  bool last_in_window() const { return in_flight() + 1 >= std::min(window_, cwnd_); }
  uint32_t window() const { return window_; }
  uint32_t cwnd() const { return cwnd_; }
  uint32_t next_seq() const { return next_; }

  // Records a first transmission; returns its sequence number.
  // Precondition: window_open().
  // `stream`: a stream's batch (InFlight::kStream), not the broadcast's.
  // `frame_bytes`: its size on the link, summed into AckResult::newly_bytes.
  // Inline: once for every frame sent.
  uint32_t push(uint32_t op, uint32_t segment, uint64_t now_ns, bool signal = false, bool stream = false,
                uint32_t frame_bytes = 0) {
    if (idle()) last_progress_ns_ = timer_ns_ = now_ns;  // the timer starts with the first frame
    const uint32_t seq = next_++;
    InFlight& e = slot(seq);
    e.segment = segment;
    e.op = op;
    e.sent_ns = now_ns;
    e.bytes = frame_bytes;
    e.tries = 1;
    e.flags = static_cast<uint8_t>((signal ? InFlight::kSignal : 0) | (stream ? InFlight::kStream : 0));
    return seq;
  }

  struct AckResult {
    uint32_t newly = 0;    // frames newly acknowledged
    uint32_t newly_stream = 0;  // of which streams' batches
    uint64_t newly_bytes = 0;   // their sizes on the link (push's frame_bytes)
    bool valid = true;     // false: it acknowledges what was never sent
    bool new_holes = false;  // holes queued for fast retransmit
    // The round trip of the newest frame it newly acknowledged, sent once
    // (0: none - Karn's rule): the path's RTT and its queues, without the
    // wait for a batched ack that the timer's sample (the oldest's) includes.
    uint64_t path_rtt_ns = 0;
    // The queue that frame met on the way to the receiver: its one-way delay
    // (the receiver's clock at arrival less ours at departure, the two
    // clocks' offset included) less the least seen on this channel lately
    // (UINT64_MAX: no sample - the ack echoed another frame, or none).
    uint64_t forward_queue_ns = UINT64_MAX;
    // The timer fired while the peer was silent, and this ack shows that
    // what it re-sent had arrived: the silence was a late peer (a core that
    // did not run, acks held up), not a loss. Shown by frames sent before
    // the timeout and acknowledged as first sent (F-RTO, RFC 5682), or by
    // the receiver reporting the re-sent copies as duplicates (D-SACK,
    // RFC 2883 and 3708) - the only sign when the timer re-sent everything
    // in flight, as at a broadcast's tail.
    bool spurious_timeout = false;
  };
  // `duplicates`: data frames came to the receiver again since its last ack.
  // `arrival`: what the ack echoed of the newest frame's arrival.
  AckResult on_ack(uint32_t cum_ack, const uint64_t sack[2], uint64_t now_ns, bool duplicates = false,
                   Arrival arrival = {});

  // --- frames to send again (holes, timeouts, abandoned frames), oldest first
  bool has_resend() const { return slab_ != nullptr && (slab_->resend_count > 0 || has_filler()); }
  // The oldest frame to send again. Precondition: has_resend().
  uint32_t resend_front() const;
  const InFlight& entry(uint32_t seq) const { return slab_->entries[seq & mask_]; }
  // resend_front() went out again at now_ns.
  void resend_done(uint64_t now_ns);

  // --- a receiver behind what was acknowledged
  // An ack said the receiver still lacks frames below base_: frames an ack
  // it never sent acknowledged (forged, in a group without a key), whose
  // data is gone from here. Left so, the receiver's window would wait for
  // them for ever and every later frame would fall outside it. When the
  // timer fires with such an ack heard since the last progress, the
  // channel sends those numbers again empty (fillers: abandoned frames the
  // receiver acknowledges and drops), at most a window's worth a time, and
  // the receiver's window moves on; the broadcast they carried fails there,
  // named. A stale ack that overtook newer ones only draws duplicates.
  // Fillers go before resend_front(), oldest first.
  bool has_filler() const { return fill_from_ != fill_to_; }
  uint32_t filler_front() const { return fill_from_; }
  void filler_done() { ++fill_from_; }

  // --- the retransmission timer
  // When the timer fires: UINT64_MAX while nothing is in flight.
  uint64_t deadline() const { return idle() ? UINT64_MAX : timer_ns_ + timeout_ns(); }
  // The wait that counts as loss: the RTO, and never less than twice the
  // longest gap between acks seen lately. On shared cores a receiver (or the
  // kernel carrying its frames) can stall for milliseconds while the round
  // trip measured between stalls is a fraction of one; srtt + 4 rttvar
  // smooths such spikes away, and every one of them then re-sent a batch of
  // frames that had arrived (on the shaped testbed, a quarter of the link).
  uint64_t timeout_ns() const { return std::max(rto_ns_, std::min(2 * ack_gap_ns_, rtt_.max_rto_ns)); }
  // The timer fired: queue the oldest frames not known to have arrived (at
  // most kTimeoutBurst), and fillers for a receiver behind (above); double
  // the RTO (RFC 6298 5.5) and restart the timer. Returns how many were
  // queued. The acks that end the silence may show the
  // timeout spurious (AckResult::spurious_timeout).
  uint32_t on_timeout(uint64_t now_ns);
  uint64_t rto_ns() const { return rto_ns_; }
  uint64_t srtt_ns() const { return srtt_ns_; }
  // A channel that starts sending after a quiet spell knows nothing of the
  // queues its lane has now; the node hands it the RTO its lane's other
  // channels learned lately, and it takes that when it is longer.
  void raise_rto(uint64_t rto_ns) { rto_ns_ = std::max(rto_ns_, std::min(rto_ns, rtt_.max_rto_ns)); }
  // Last time an ack acknowledged something new, or the first send after
  // idle: the peer's silence is measured from here (a timeout restarts the
  // retransmission timer, not this).
  uint64_t last_progress_ns() const { return last_progress_ns_; }
  // The member was not looking for `ns` (its core stalled): neither heard
  // nor sent to the peer meanwhile, so that time is not the peer's silence.
  void excuse_silence(uint64_t ns, uint64_t now_ns) { last_progress_ns_ = std::min(now_ns, last_progress_ns_ + ns); }

  // The broadcast these frames belong to failed and its data is gone. They
  // stay in flight, queued at once, to be re-sent as payload-less "abandoned"
  // frames that the receiver acknowledges and drops: the channel's sequence
  // space stays in step with the receiver's window, so the group remains usable.
  // Streams' batches stay as they are unless `streams_too` (the streams failed).
  void abandon_in_flight(uint64_t now_ns, bool streams_too = false);

 private:
  InFlight& slot(uint32_t seq) { return slab_->entries[seq & mask_]; }
  static bool test(const uint64_t* bm, uint32_t pos) { return bm[pos >> 6] >> (pos & 63) & 1; }
  bool acked(uint32_t seq) const { return test(slab_->acked, seq & mask_); }
  bool queued(uint32_t seq) const { return test(slab_->resend, seq & mask_); }
  void set_acked(uint32_t seq);
  void clear_acked(uint32_t seq) { slab_->acked[(seq & mask_) >> 6] &= ~(uint64_t{1} << (seq & 63)); }
  void queue_resend(uint32_t seq);
  void sample_rtt(uint64_t rtt_ns);
  void queue_holes_below(uint32_t limit);
  // Congestion control after TCP Reno (RFC 5681): slow start up to ssthresh,
  // then one frame per window of acks; a hole halves the window. Timeouts do
  // not: on polling cores shared by many nodes most quiet spells are a
  // descheduled receiver, and halving on them collapsed throughput (16 MiB
  // chain on the fabric: 36 ms -> 170+ ms). The receive window caps it.
  void on_hole();
  void on_acked(uint32_t newly);

  FlightSlab* slab_ = nullptr;
  uint32_t mask_;
  uint32_t window_;
  uint32_t base_ = 0;   // oldest unacked
  uint32_t next_ = 0;   // next to send
  RttParams rtt_;
  uint64_t srtt_ns_ = 0;
  uint64_t rttvar_ns_ = 0;
  uint64_t rto_ns_;
  uint64_t last_progress_ns_ = 0;
  // The least one-way delay lately, as (rx - sent + 2^63) mod 2^64: the
  // clocks' offset may make the difference negative, and the bias keeps
  // the order of such values in an unsigned one.
  WindowedMin<uint64_t> base_owd_{rtt_.base_window_ns};
  // Whether the last timeout was spurious (AckResult::spurious_timeout):
  // open from the first timeout of a silence until acks tell - at once by
  // a frame first sent before it, or by duplicates reported up to a timeout
  // after the silence ended (the re-sent copies arrive after the originals,
  // perhaps after the channel went idle).
  enum class Episode : uint8_t { kNone, kSilent, kSettling };
  Episode episode_ = Episode::kNone;
  uint64_t timed_out_ns_ = 0;     // kSilent: the silence's first timeout
  uint64_t settle_until_ns_ = 0;  // kSettling: duplicates until then still count
  void end_episode(AckResult& r, bool spurious) {
    r.spurious_timeout = spurious;
    episode_ = Episode::kNone;
  }
  uint64_t timer_ns_ = 0;  // when the retransmission timer last (re)started
  // An ack behind base_ since the last progress, and its cumulative ack;
  // fillers queued for [fill_from_, fill_to_).
  bool behind_ = false;
  uint32_t behind_cum_ = 0;
  uint32_t fill_from_ = 0, fill_to_ = 0;
  // The longest gap between acks that acknowledged something new, forgotten
  // slowly (1/1024 of it per ack; about 700 acks halve it).
  uint64_t ack_gap_ns_ = 0;
  uint32_t cwnd_;
  uint32_t ssthresh_;
  uint32_t acked_in_avoidance_ = 0;

  static constexpr uint32_t kTimeoutBurst = 4;
  static constexpr uint32_t kMinCwnd = 4;
};

}  // namespace lanecast::engine::reliable
