// Node: timers. Each channel with frames in flight has one retransmission
// deadline (send_channel.h) and one silence deadline (peer_timeout_ns since it
// last saw progress); the running broadcast has one more (nothing arrived for
// peer_timeout_ns). scan() runs when the earliest of them is due - never more
// often than min_scan_interval_ns - and looks only at the channels holding
// frames in flight (at most NodeConfig::active_channels), never at every peer
// or every frame.
#include <algorithm>

#include "engine/node.h"

namespace lanecast::engine {

void Node::scan(uint64_t now) {
  last_scan_ns_ = now;
  uint64_t next = UINT64_MAX;
  for (size_t i = 0; i < active_.size(); ++i) {
    Channel& c = channels_[active_[i]];
    if (c.tx.idle()) continue;
    const bool watched = op_.active || (stream_unacked_ > 0 && !streams_failed_);
    if (watched && now > c.tx.last_progress_ns() + cfg_.peer_timeout_ns) {
      if (op_.active) finish(now, OpError::PeerSilent, c.peer);
      if (stream_unacked_ > 0 && !streams_failed_) fail_streams(now, OpError::PeerSilent, c.peer);
      scan_due_ns_ = now + cfg_.min_scan_interval_ns;  // frames were abandoned: look again soon
      return;
    }
    if (now >= c.tx.deadline()) {
      if (c.tx.on_timeout(now) > 0) {
        counters_.rto_timeouts.add();
        if (!c.in_resend) {
          c.in_resend = true;
          resend_.push_back(active_[i]);
        }
      }
    }
    next = std::min(next, c.tx.deadline());
    if (watched) next = std::min(next, c.tx.last_progress_ns() + cfg_.peer_timeout_ns + 1);
  }
  if (op_.active && !op_.machine->done()) {
    // In a fail-stop group the member that sends to a lost peer names it
    // (PeerSilent) at the deadline and tells everyone; those that only wait
    // for data give it half a deadline more to arrive, so they fail naming
    // the lost rank rather than "nothing arrived".
    const uint64_t silent_at = op_.last_rx_ns + cfg_.peer_timeout_ns + (cfg_.fail_stop ? cfg_.peer_timeout_ns / 2 : 0);
    if (now > silent_at) {
      finish(now, OpError::NoProgress, algos::kNoRank);
      scan_due_ns_ = now + cfg_.min_scan_interval_ns;
      return;
    }
    next = std::min(next, silent_at + 1);
  }
  scan_due_ns_ = next == UINT64_MAX ? UINT64_MAX : std::max(next, now + cfg_.min_scan_interval_ns);
}

}  // namespace lanecast::engine
