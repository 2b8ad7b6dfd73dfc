// Node: the transmit path. The machine's actions became owed work (runs per
// channel in channels_, multicasts in the broadcast's queue); pump() turns
// owed work into frames - first what must be sent again (Resends::pump,
// node_resends.cc), then multicasts,
// then owed sends in the order the machine owed its peers (channels.h
// decides the order) - within each channel's window, each lane's pacer and
// the lane's transmit batch; tx_lanes_.flush(port_) hands each lane's batch
// to the port once per iteration.
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <algorithm>
#include <functional>

#include "engine/auth/frame_auth.h"
#include "engine/node/node.h"

namespace lanecast::engine {

using algos::Rank;
using algos::SegmentIndex;

// ---------------------------------------------------------------- sending

void Node::pump(uint64_t now) {
  tx_lanes_.new_turn();
  if (channels_.resending()) resends_.pump(now);
  // Lanes whose owed sends wait behind a multicast that could not go.
  const uint32_t blocked = broadcast_.multicasting() ? broadcast_.send_multicasts(now, tx_lanes_) : 0;
  if (channels_.owed() > 0) pump_owed(now, blocked);
}

// Owed sends in the machine's order (channels_ offers them, channels.h):
// each item offered becomes a frame if its window and lane have room.
void Node::pump_owed(uint64_t now, uint32_t blocked_lanes) {
  using Step = Channels::Step;
  channels_.send_owed(blocked_lanes, [&](Channel& c, const OwedItem& item, bool may_send) -> Channels::Outcome {
    if (item.is_stream() && !streams_.holds(item.stream, item.value)) {
      // A batch let go before it was sent here: the reports say this peer's
      // subtree delivered it (as Resends::pump takes them to). Nothing to
      // send, and what is owed behind it must not wait for it for ever.
      streams_.let_go();
      return Step::kLetGo;
    }
    if (!may_send) {
      // Acks, not the pacer, hold this lane back: its controller hears it.
      if (rates_.on() && c.tx.slab() != nullptr && !c.tx.window_open()) rates_.window_full(c.lane);
      return Step::kWait;
    }
    if (!item.is_stream() && !item.signal) return send_segment_run(c, item, now);  // a run of one, or more
    // A stream's batch or a machine's signal.
    const uint32_t payload = item.is_stream() ? streams_.batch_bytes(item.stream, item.value) : 0;
    const uint32_t frame_bytes = frames_.data_frame_bytes(payload);
    if (!tx_lanes_.room(c.lane, frame_bytes, now)) return Step::kLaneFull;
    // Ask for an ack at once when this is the last frame we have for the
    // peer in this broadcast, or when it fills the window.
    const bool last = !item.is_stream() && c.owed.size() == 1 && broadcast_.machine_done();
    const uint16_t flags = last || c.tx.last_in_window() ? wire::kFlagAckNow : 0;
    rte_mbuf* m = nullptr;
    if (item.is_stream()) {
      m = streams_.build_frame(c.peer, c.lane, item.stream, item.value, c.tx.next_seq(), flags);
    } else {
      m = broadcast_.build_signal(c.peer, c.lane, item.value, c.tx.next_seq(), flags);
      if (m != nullptr) counters_.tx_signals.add();
    }
    if (m == nullptr) return Step::kStop;  // a pool is empty: try again next iteration
    peers_.counters(c.peer).tx_data.add();
    if (c.tx.idle()) resends_.note_deadline(now + c.tx.timeout_ns());
    if (item.is_stream()) {
      c.tx.push(item.stream, item.value, now, false, /*stream=*/true, frame_bytes);
      streams_.sent(item.stream, c.peer, item.value);
    } else {
      c.tx.push(broadcast_.current_op(), item.value, now, item.signal, /*stream=*/false, frame_bytes);
    }
    tx_lanes_.push(c.lane, m);
    return Step::kSent;
  });
}

// The broadcast's segments owed to one peer: the first item offered and,
// when nothing owed to another peer comes between them (a pipeline's
// forwards, a root's sends to its one child), the rest of its run, sent as
// one burst: the window, the order and the counters are dealt with once for
// the run rather than once a frame. The frames are
// those the one-by-one path would send, in the same order: only the last
// may ask for an ack at once - it fills the window, or it is the last the
// peer is owed in this broadcast.
Channels::Outcome Node::send_segment_run(Channel& c, const OwedItem& item, uint64_t now) {
  using Step = Channels::Step;
  constexpr uint32_t kMaxRun = Broadcast::kMaxRun;
  const uint32_t room = c.tx.window_room();
  uint32_t n = std::min({item.run, room, kMaxRun, tx_lanes_.batch_room(c.lane)});
  uint32_t frame_bytes[kMaxRun];
  for (uint32_t i = 0; i < n; ++i)
    frame_bytes[i] = frames_.data_frame_bytes(broadcast_.segment_length(item.value + i * item.stride));
  n = tx_lanes_.room_for_run(c.lane, frame_bytes, n, now);
  if (n == 0) return Step::kLaneFull;
  const bool last = n == room || (n == c.owed.size() && broadcast_.machine_done());
  rte_mbuf* frames[kMaxRun];
  const uint32_t built = broadcast_.data_frames(addrs_[c.peer], item.value, item.stride, n, c.tx.next_seq(), c.lane,
                                                last ? wire::kFlagAckNow : 0, frames);
  if (built == 0) return Step::kStop;  // a pool is empty: try again next iteration
  if (c.tx.idle()) resends_.note_deadline(now + c.tx.timeout_ns());
  const uint32_t op = broadcast_.current_op();
  for (uint32_t i = 0; i < built; ++i) {
    c.tx.push(op, item.value + i * item.stride, now, false, /*stream=*/false, frame_bytes[i]);
    tx_lanes_.push(c.lane, frames[i]);
  }
  counters_.tx_data.add(built);
  counters_.tx_data_lane[c.lane].add(built);
  peers_.counters(c.peer).tx_data.add(built);
  return Channels::Outcome{Step::kSent, built};
}

// Sends c's ack now if its lane has room; false if it must wait.
bool Node::send_ack(Channel& c, uint64_t now) {
  if (!tx_lanes_.room(c.lane, frames_.link_bytes() + frames_.ack_header(), now)) return false;
  rte_mbuf* a = build_ack(c);
  if (a == nullptr) return false;
  tx_lanes_.push(c.lane, a);
  counters_.tx_acks.add();
  return true;
}

void Node::send_acks(uint64_t now) {
  acks_.send_due(now, [&](uint32_t ch) { return send_ack(channels_[ch], now); });
}

}  // namespace lanecast::engine
