// Resends (node_resends.h): resends, found and sent, and the deadlines that
// find them. Each
// channel with frames in flight has one retransmission deadline
// (send_channel.h) and one silence deadline (peer_timeout_ns since it last
// saw progress); the running broadcast has one more (nothing arrived for
// peer_timeout_ns). scan() runs when the earliest of them is due - never more
// often than min_scan_interval_ns - and looks only at the channels holding
// frames in flight (at most NodeConfig::active_channels), never at every peer
// or every frame: a passed retransmission deadline queues the channel's
// frames to send again (Channels::on_timeout), as an ack that reveals holes
// does (Channels::on_ack). pump() sends what is queued, first in each
// turn's transmit path (node_tx.cc's Node::pump).
#include "engine/node/node_resends.h"

#include <rte_mbuf.h>

#include <algorithm>

#include "engine/node/node.h"

namespace lanecast::engine {

// A retransmission or silence deadline that passed while this member was
// not looking says nothing of the peer. Two ways not to look: frames still
// wait in a receive queue (a lane gave a full burst) - they may be the very
// acks a timer waits for; or the core stalled since this member's last
// turn (on a kernel-backed port, a transmit can carry a burst through the
// kernel's network for milliseconds, and acks that came meanwhile may
// still sit in the kernel's backlog until the next transmit). So timers
// wait until the queues are drained and two turns passed after a stall.
// Bounded: a queue that never drains (a flood) cannot hold them off.
void Resends::after_rx(uint64_t now, bool behind) {
  if (last_rx_ns_ != 0 && now > last_rx_ns_ + kStallNs) {
    hold_turns_ = 2;
    excuse_silence(last_rx_ns_, now);
  }
  last_rx_ns_ = now;
  const bool blind = behind || hold_turns_ > 0;
  if (hold_turns_ > 0) --hold_turns_;
  if (now >= due_ns_) {
    if (blind && timer_defers_ < kMaxTimerDefers) {
      ++timer_defers_;
      node_.counters_.timers_deferred.add();
    } else {
      timer_defers_ = 0;
      scan(now);
    }
  }
}

// The member was not looking from `unseen_from` to `now` (its host stalled,
// or its core slept past its time): it heard nobody and sent nothing again
// meanwhile, so that time is nobody's silence - or a host that stalled past
// the peer timeout failed every broadcast it had running at its first look,
// blaming a peer. Only long gaps count (a quarter of the peer timeout): a
// member whose every turn is a few milliseconds of kernel transmits is
// looking, and a dead peer must still be found.
void Resends::excuse_silence(uint64_t unseen_from, uint64_t now) {
  unseen_from = std::max(unseen_from, excused_to_ns_);
  if (now <= unseen_from || now - unseen_from < node_.cfg_.peer_timeout_ns / 4) return;
  const uint64_t unseen = now - unseen_from;
  excused_to_ns_ = now;
  Channels& channels = node_.channels_;
  for (size_t i = 0; i < channels.active_count(); ++i) channels.active(i).tx.excuse_silence(unseen, now);
  node_.broadcast_.excuse(unseen, now);
}

void Resends::scan(uint64_t now) {
  // A scan later than a stall past its time: the core slept past it.
  if (due_ns_ != UINT64_MAX && now > due_ns_ + kStallNs) excuse_silence(due_ns_, now);
  const NodeConfig& cfg = node_.cfg_;
  Channels& channels = node_.channels_;
  Broadcast& broadcast = node_.broadcast_;
  stream::Streams& streams = node_.streams_;
  uint64_t next = UINT64_MAX;
  for (size_t i = 0; i < channels.active_count(); ++i) {
    Channel& c = channels.active(i);
    if (c.tx.idle()) continue;
    const bool watched = broadcast.active() || (streams.unacked() > 0 && !streams.failed());
    if (watched && now > c.tx.last_progress_ns() + cfg.peer_timeout_ns) {
      broadcast.fail(now, OpError::PeerSilent, c.peer);
      if (streams.unacked() > 0 && !streams.failed()) streams.fail(now, OpError::PeerSilent, c.peer);
      due_ns_ = now + cfg.min_scan_interval_ns;  // frames were abandoned: look again soon
      return;
    }
    if (now >= c.tx.deadline() && channels.on_timeout(c, now) && node_.rates_.on()) node_.rates_.timed_out(c.lane, now);
    next = std::min(next, c.tx.deadline());
    if (watched) next = std::min(next, c.tx.last_progress_ns() + cfg.peer_timeout_ns + 1);
  }
  if (const uint64_t silent_at = broadcast.silent_at(); silent_at != UINT64_MAX) {
    if (now > silent_at) {
      broadcast.fail(now, OpError::NoProgress, algos::kNoRank);
      due_ns_ = now + cfg.min_scan_interval_ns;
      return;
    }
    next = std::min(next, silent_at + 1);
  }
  due_ns_ = next == UINT64_MAX ? UINT64_MAX : std::max(next, now + cfg.min_scan_interval_ns);
}

// Frames to send again: holes the acks revealed, timeouts, abandoned frames.
void Resends::pump(uint64_t now) {
  Channels& channels = node_.channels_;
  TxLanes& tx_lanes = node_.tx_lanes_;
  NodeCounters& counters = node_.counters_;
  Broadcast& broadcast = node_.broadcast_;
  channels.send_resends([&](Channel& c) {
    const uint32_t frame = node_.frames_.data_frame_bytes(node_.cfg_.segment_bytes);  // a full segment's
    while (c.tx.has_resend() && tx_lanes.room(c.lane, frame, now)) {
      if (c.tx.has_filler()) {  // numbers a forged ack took from the receiver (send_channel.h)
        rte_mbuf* f = build_abandoned(c, c.tx.filler_front(), reliable::InFlight{});
        if (f == nullptr) break;
        counters.tx_fillers.add();
        c.tx.filler_done();
        tx_lanes.push(c.lane, f);
        continue;
      }
      const uint32_t seq = c.tx.resend_front();
      const reliable::InFlight& e = c.tx.entry(seq);
      rte_mbuf* m = nullptr;
      const bool stream = (e.flags & reliable::InFlight::kStream) != 0;
      // Only the running broadcast's frames are in flight unabandoned.
      const bool gone = !stream && !broadcast.runs(e.op);
      if (stream && !(e.flags & reliable::InFlight::kAbandoned)) {
        m = node_.streams_.build_frame(c.peer, c.lane, static_cast<uint16_t>(e.op), e.segment, seq, wire::kFlagAckNow);
        if (m != nullptr) {
          counters.tx_retransmits.add();
        } else {
          // Let go already: the peer's subtree delivered it (so it has it).
          m = build_abandoned(c, seq, e);
          if (m != nullptr) counters.tx_abandoned.add();
        }
      } else if ((e.flags & reliable::InFlight::kAbandoned) || gone) {
        m = build_abandoned(c, seq, e);
        if (m != nullptr) counters.tx_abandoned.add();
      } else if (e.flags & reliable::InFlight::kSignal) {
        m = broadcast.build_signal(c.peer, c.lane, e.segment, seq, wire::kFlagAckNow);
        if (m != nullptr) counters.tx_retransmits.add();
      } else {
        m = broadcast.data_frame(node_.addrs_[c.peer], e.segment, seq, c.lane, wire::kFlagAckNow);
        if (m != nullptr) counters.tx_retransmits.add();
      }
      if (m == nullptr) break;
      node_.peers_.counters(c.peer).tx_retransmits.add();
      c.tx.resend_done(now);
      tx_lanes.push(c.lane, m);
    }
  });
}

// A frame that stands for a sequence number this member will not send
// again (abandoned, or let go): the receiver's window moves past it.
rte_mbuf* Resends::build_abandoned(const Channel& c, uint32_t seq, const reliable::InFlight& e) {
  FrameBuilder& frames = node_.frames_;
  uint8_t* at;
  rte_mbuf* h = frames.alloc_frame(node_.addrs_[c.peer], frames.data_header(), &at);
  if (h == nullptr) return nullptr;
  wire::DataBody b{};
  uint16_t flags = wire::kFlagAbandoned | wire::kFlagAckNow | frames.seal_flag();
  if (e.flags & reliable::InFlight::kStream) {
    // Which stream's batch it is: a child that lacks it learns that it will
    // never come from here (Streams::given_up).
    const stream::StreamState& s = node_.streams_.state(static_cast<uint16_t>(e.op));
    b.op = s.index;
    b.root = s.publisher;
    flags |= wire::kFlagStream;
  } else {
    b.op = e.op;
  }
  b.seq = seq;
  b.segment = e.segment;
  b.segment_bytes = node_.cfg_.segment_bytes;
  b.lane = static_cast<uint8_t>(c.lane);
  wire::write_data(at, frames.origin(), b, flags);
  frames.put_payload_seal(at, wire::Seal{});
  return h;
}

}  // namespace lanecast::engine
