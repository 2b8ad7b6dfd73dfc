// Node: resends, found and sent, and the deadlines that find them. Each
// channel with frames in flight has one retransmission deadline
// (send_channel.h) and one silence deadline (peer_timeout_ns since it last
// saw progress); the running broadcast has one more (nothing arrived for
// peer_timeout_ns). scan() runs when the earliest of them is due - never more
// often than min_scan_interval_ns - and looks only at the channels holding
// frames in flight (at most NodeConfig::active_channels), never at every peer
// or every frame: a passed retransmission deadline queues the channel's
// frames to send again (Channels::on_timeout), as an ack that reveals holes
// does (Channels::on_ack). pump_resends() sends what is queued, first in
// each turn's transmit path (node_tx.cc's pump).
#include <rte_mbuf.h>

#include <algorithm>

#include "engine/node/node.h"

namespace lanecast::engine {

// The member was not looking from `unseen_from` to `now` (its host stalled,
// or its core slept past its time): it heard nobody and sent nothing again
// meanwhile, so that time is nobody's silence - or a host that stalled past
// the peer timeout failed every broadcast it had running at its first look,
// blaming a peer. Only long gaps count (a quarter of the peer timeout): a
// member whose every turn is a few milliseconds of kernel transmits is
// looking, and a dead peer must still be found.
void Node::excuse_silence(uint64_t unseen_from, uint64_t now) {
  unseen_from = std::max(unseen_from, excused_to_ns_);
  if (now <= unseen_from || now - unseen_from < cfg_.peer_timeout_ns / 4) return;
  const uint64_t unseen = now - unseen_from;
  excused_to_ns_ = now;
  for (size_t i = 0; i < channels_.active_count(); ++i) channels_.active(i).tx.excuse_silence(unseen, now);
  broadcast_.excuse(unseen, now);
}

void Node::scan(uint64_t now) {
  // A scan later than a stall past its time: the core slept past it.
  if (scan_due_ns_ != UINT64_MAX && now > scan_due_ns_ + kStallNs) excuse_silence(scan_due_ns_, now);
  last_scan_ns_ = now;
  uint64_t next = UINT64_MAX;
  for (size_t i = 0; i < channels_.active_count(); ++i) {
    Channel& c = channels_.active(i);
    if (c.tx.idle()) continue;
    const bool watched = broadcast_.active() || (streams_.unacked() > 0 && !streams_.failed());
    if (watched && now > c.tx.last_progress_ns() + cfg_.peer_timeout_ns) {
      broadcast_.fail(now, OpError::PeerSilent, c.peer);
      if (streams_.unacked() > 0 && !streams_.failed()) streams_.fail(now, OpError::PeerSilent, c.peer);
      scan_due_ns_ = now + cfg_.min_scan_interval_ns;  // frames were abandoned: look again soon
      return;
    }
    if (now >= c.tx.deadline() && channels_.on_timeout(c, now) && !rates_.empty()) rate_timeout(c.lane, now);
    next = std::min(next, c.tx.deadline());
    if (watched) next = std::min(next, c.tx.last_progress_ns() + cfg_.peer_timeout_ns + 1);
  }
  if (const uint64_t silent_at = broadcast_.silent_at(); silent_at != UINT64_MAX) {
    if (now > silent_at) {
      broadcast_.fail(now, OpError::NoProgress, algos::kNoRank);
      scan_due_ns_ = now + cfg_.min_scan_interval_ns;
      return;
    }
    next = std::min(next, silent_at + 1);
  }
  scan_due_ns_ = next == UINT64_MAX ? UINT64_MAX : std::max(next, now + cfg_.min_scan_interval_ns);
}

// Frames to send again: holes the acks revealed, timeouts, abandoned frames.
void Node::pump_resends(uint64_t now) {
  channels_.send_resends([&](Channel& c) {
    const uint32_t frame = full_frame_bytes();
    while (c.tx.has_resend() && tx_lanes_.room(c.lane, frame, now)) {
      if (c.tx.has_filler()) {  // numbers a forged ack took from the receiver (send_channel.h)
        rte_mbuf* f = build_abandoned(c, c.tx.filler_front(), reliable::InFlight{});
        if (f == nullptr) break;
        counters_.tx_fillers.add();
        c.tx.filler_done();
        tx_lanes_.push(c.lane, f);
        continue;
      }
      const uint32_t seq = c.tx.resend_front();
      const reliable::InFlight& e = c.tx.entry(seq);
      rte_mbuf* m = nullptr;
      const bool stream = (e.flags & reliable::InFlight::kStream) != 0;
      // Only the running broadcast's frames are in flight unabandoned.
      const bool gone = !stream && !broadcast_.runs(e.op);
      if (stream && !(e.flags & reliable::InFlight::kAbandoned)) {
        m = streams_.build_frame(c.peer, c.lane, static_cast<uint16_t>(e.op), e.segment, seq, wire::kFlagAckNow);
        if (m != nullptr) {
          counters_.tx_retransmits.add();
        } else {
          // Let go already: the peer's subtree delivered it (so it has it).
          m = build_abandoned(c, seq, e);
          if (m != nullptr) counters_.tx_abandoned.add();
        }
      } else if ((e.flags & reliable::InFlight::kAbandoned) || gone) {
        m = build_abandoned(c, seq, e);
        if (m != nullptr) counters_.tx_abandoned.add();
      } else if (e.flags & reliable::InFlight::kSignal) {
        m = broadcast_.build_signal(c.peer, c.lane, e.segment, seq, wire::kFlagAckNow);
        if (m != nullptr) counters_.tx_retransmits.add();
      } else {
        m = broadcast_.data_frame(addrs_[c.peer], e.segment, seq, c.lane, wire::kFlagAckNow);
        if (m != nullptr) counters_.tx_retransmits.add();
      }
      if (m == nullptr) break;
      peer_counters_[c.peer].tx_retransmits.add();
      c.tx.resend_done(now);
      tx_lanes_.push(c.lane, m);
    }
  });
}

}  // namespace lanecast::engine
