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
  channels_.send_owed(blocked_lanes, [&](Channel& c, const OwedItem& item, bool may_send) {
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
    uint32_t payload = 0;
    if (item.is_stream()) {
      payload = streams_.batch_bytes(item.stream, item.value);
    } else if (!item.signal) {
      payload = broadcast_.segment_length(item.value);
    }
    const uint32_t frame_bytes = frames_.data_frame_bytes(payload);
    if (!tx_lanes_.room(c.lane, frame_bytes, now)) return Step::kLaneFull;
    // Ask for an ack at once when this is the last frame we have for the
    // peer in this broadcast, or when it fills the window.
    const bool last = !item.is_stream() && c.owed.size() == 1 && broadcast_.machine_done();
    const uint16_t flags = last || c.tx.last_in_window() ? wire::kFlagAckNow : 0;
    rte_mbuf* m = nullptr;
    if (item.is_stream()) {
      m = streams_.build_frame(c.peer, c.lane, item.stream, item.value, c.tx.next_seq(), flags);
    } else if (item.signal) {
      m = broadcast_.build_signal(c.peer, c.lane, item.value, c.tx.next_seq(), flags);
      if (m != nullptr) counters_.tx_signals.add();
    } else {
      m = broadcast_.data_frame(addrs_[c.peer], item.value, c.tx.next_seq(), c.lane, flags);
      if (m != nullptr) {
        counters_.tx_data.add();
        counters_.tx_data_lane[c.lane].add();
      }
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
