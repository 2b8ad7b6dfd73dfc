// Node: the transmit path. The machine's actions become owed work (runs per
// channel in channels_, multicasts in a queue of their own); pump() turns
// owed work into frames - first what must be sent again, then multicasts,
// then owed sends in the order the machine owed its peers (channels.h
// decides the order) - within each channel's window, each lane's pacer and
// the lane's transmit batch; tx_lanes_.flush(port_) hands each lane's batch
// to the port once per iteration.
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <algorithm>
#include <functional>

#include "engine/auth/frame_auth.h"
#include "engine/checksum/crc32c.h"
#include "engine/node/node.h"
#include "engine/node/node_sink.h"

namespace lanecast::engine {

using algos::Rank;
using algos::SegmentIndex;

// ---------------------------------------------------------------- machine actions

void Node::owe(Rank to, SegmentIndex seg, algos::Lane lane) {
  if (to >= cfg_.nodes || to == cfg_.rank || seg >= op_.plan->segments() || lane >= cfg_.lanes) {
    internal_error_ = true;
    return;
  }
  if (!channels_.owe_segment(channel(to, lane), seg)) internal_error_ = true;
}

void Node::owe_signal(Rank to, uint32_t tag) {
  if (to >= cfg_.nodes || to == cfg_.rank) {
    internal_error_ = true;
    return;
  }
  if (!channels_.owe_signal(channel(to, 0), tag)) internal_error_ = true;
}

void Node::multicast(SegmentIndex seg, algos::Lane lane) {
  if (seg >= op_.plan->segments() || lane >= cfg_.lanes) {
    internal_error_ = true;
    return;
  }
  // Sized for one multicast per segment, the most a machine may ask for
  // (algos/machine.h); a machine asking for more loses the extra, counted.
  if (!multicasts_.push(seg, lane)) {
    counters_.tx_datagrams_dropped.add();
    return;
  }
  if (!caps_.multicast) counters_.tx_mcast_emulated.add();
}

// One timer per machine (algos/machine.h): a second before the first fired is
// the machine's error.
void Node::arm(uint64_t at_ns, uint32_t tag) {
  if (op_.timer_at_ns != kNoTimer) {
    internal_error_ = true;
    return;
  }
  op_.timer_at_ns = at_ns;
  op_.timer_tag = tag;
}

void Node::fire_timer(uint64_t now) {
  op_.timer_at_ns = kNoTimer;
  counters_.timers_fired.add();
  Sink sink(*this, now);
  op_.machine->on_timer(op_.timer_tag, sink);
}

// The bytes are in the application's buffer already (copied while their CRC
// was checked, node_rx.cc): delivering only makes them part of the result.
void Node::deliver(SegmentIndex seg) {
  if (seg >= op_.plan->segments() || !store_.held(seg)) {
    internal_error_ = true;
    return;
  }
  counters_.delivered_bytes.add(op_.plan->segment(seg).length);
}

// ---------------------------------------------------------------- frames

// The root's one copy: a segment of the user's buffer into a frame buffer,
// with its CRC computed in the same pass, made when the segment is first sent
// so the copy is spread over the pipeline.
bool Node::materialize(SegmentIndex seg) {
  if (op_.sub.root != cfg_.rank) return false;
  rte_mbuf* m = rte_pktmbuf_alloc(pools_.payload);
  if (m == nullptr) return false;
  const algos::Segment s = op_.plan->segment(seg);
  void* dst = rte_pktmbuf_append(m, static_cast<uint16_t>(s.length));
  if (dst == nullptr) {
    rte_pktmbuf_free(m);
    return false;
  }
  // With a key the root seals the segment once (the seal stands in for the
  // CRC) and every forwarder carries the seal.
  uint32_t crc = 0;
  wire::Seal seal{};
  if (auth_ != nullptr) {
    std::memcpy(dst, op_.sub.buffer + s.offset, s.length);
    seal = auth_->seal_payload(static_cast<const uint8_t*>(dst), s.length);
  } else {
    crc = crc32c_copy(0, dst, op_.sub.buffer + s.offset, s.length);
  }
  store_.keep(seg, SegmentStore::Entry{m, crc, seal});
  counters_.root_copy_bytes.add(s.length);
  ++op_.copied_out;
  return true;
}

bool Node::buffer_done() const {
  const uint32_t segments = op_.plan->segments();
  const bool copied = op_.sub.root == cfg_.rank ? op_.copied_out == segments : op_.held == segments;
  return copied && channels_.owed() == streams_.owed() && multicasts_.empty() && !tx_lanes_.pending();
}

// ---------------------------------------------------------------- sending

void Node::pump(uint64_t now) {
  tx_lanes_.new_turn();
  datagram_blocked_lanes_ = 0;
  if (channels_.resending()) pump_resends(now);
  if (!multicasts_.empty()) pump_datagrams(now);
  if (channels_.owed() > 0) pump_owed(now);
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
      const bool gone = !stream && (!op_.active || e.op != op_.sub.op);
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
        m = build_signal(c, e.segment, seq, wire::kFlagAckNow);
        if (m != nullptr) counters_.tx_retransmits.add();
      } else {
        m = build_data(addrs_[c.peer], e.segment, seq, c.lane, wire::kFlagAckNow);
        if (m != nullptr) counters_.tx_retransmits.add();
      }
      if (m == nullptr) break;
      peer_counters_[c.peer].tx_retransmits.add();
      c.tx.resend_done(now);
      tx_lanes_.push(c.lane, m);
    }
  });
}

// Multicasts: one frame to the group address where the port's switch copies,
// otherwise one datagram to each member in turn (the emulation).
void Node::pump_datagrams(uint64_t now) {
  while (!multicasts_.empty()) {
    MulticastQueue::Item& g = multicasts_.front();
    if (!store_.held(g.segment) && !materialize(g.segment)) {
      if (op_.sub.root != cfg_.rank) internal_error_ = true;  // multicasting what it lacks
      return;
    }
    const uint32_t frame = link_bytes_ + hdr_data_ + op_.plan->segment(g.segment).length;
    if (g.next_rank == cfg_.rank) ++g.next_rank;
    // A multicast that cannot go yet holds back the owed sends of its lane
    // (pump_owed): they come after it in the machine's order, and a small
    // frame the pacer would let through - mcast_chain's last segment to
    // virtual rank 1 - must not overtake the multicasts it closes.
    datagram_blocked_lanes_ = 1u << g.lane;
    if (caps_.multicast) {
      if (!tx_lanes_.room(g.lane, frame, now, /*datagram=*/true)) return;
      rte_mbuf* m = build_data(group_addrs_[g.lane], g.segment, 0, g.lane, 0, wire::FrameType::Datagram);
      if (m == nullptr) return;
      tx_lanes_.push(g.lane, m);
      counters_.tx_datagrams.add();
      g.next_rank = cfg_.nodes;
    }
    while (g.next_rank < cfg_.nodes) {
      if (!tx_lanes_.room(g.lane, frame, now, /*datagram=*/true)) return;
      rte_mbuf* m = build_data(addrs_[g.next_rank], g.segment, 0, g.lane, 0, wire::FrameType::Datagram);
      if (m == nullptr) return;
      tx_lanes_.push(g.lane, m);
      counters_.tx_datagrams.add();
      if (++g.next_rank == cfg_.rank) ++g.next_rank;
    }
    multicasts_.pop();
  }
  datagram_blocked_lanes_ = 0;
}

// Owed sends in the machine's order (channels_ offers them, channels.h):
// each item offered becomes a frame if its window and lane have room.
void Node::pump_owed(uint64_t now) {
  using Step = Channels::Step;
  channels_.send_owed(datagram_blocked_lanes_, [&](Channel& c, const OwedItem& item, bool may_send) {
    if (item.is_stream() && !streams_.holds(item.stream, item.value)) {
      // A batch let go before it was sent here: the reports say this peer's
      // subtree delivered it (as pump_resends takes them to). Nothing to
      // send, and what is owed behind it must not wait for it for ever.
      streams_.let_go();
      return Step::kLetGo;
    }
    if (!may_send) {
      // Acks, not the pacer, hold this lane back: its controller hears it.
      if (!rates_.empty() && c.tx.slab() != nullptr && !c.tx.window_open()) rates_[c.lane].on_window_full();
      return Step::kWait;
    }
    uint32_t payload = 0;
    if (item.is_stream()) {
      payload = streams_.batch_bytes(item.stream, item.value);
    } else if (!item.signal) {
      payload = op_.plan->segment(item.value).length;
    }
    const uint32_t frame_bytes = link_bytes_ + hdr_data_ + payload;
    if (!tx_lanes_.room(c.lane, frame_bytes, now)) return Step::kLaneFull;
    // Ask for an ack at once when this is the last frame we have for the
    // peer in this broadcast, or when it fills the window.
    const bool last = !item.is_stream() && c.owed.size() == 1 && op_.machine->done();
    const uint16_t flags = last || c.tx.last_in_window() ? wire::kFlagAckNow : 0;
    rte_mbuf* m = nullptr;
    if (item.is_stream()) {
      m = streams_.build_frame(c.peer, c.lane, item.stream, item.value, c.tx.next_seq(), flags);
    } else if (item.signal) {
      m = build_signal(c, item.value, c.tx.next_seq(), flags);
      if (m != nullptr) counters_.tx_signals.add();
    } else if (store_.held(item.value) || materialize(item.value)) {
      m = build_data(addrs_[c.peer], item.value, c.tx.next_seq(), c.lane, flags);
      if (m != nullptr) {
        counters_.tx_data.add();
        counters_.tx_data_lane[c.lane].add();
      }
    } else if (op_.sub.root != cfg_.rank) {
      internal_error_ = true;  // sending what it lacks
    }
    if (m == nullptr) return Step::kStop;  // a pool is empty: try again next iteration
    peer_counters_[c.peer].tx_data.add();
    if (c.tx.idle()) note_deadline(now + c.tx.timeout_ns());
    if (item.is_stream()) {
      c.tx.push(item.stream, item.value, now, false, /*stream=*/true, frame_bytes);
      streams_.sent(item.stream, c.peer, item.value);
    } else {
      c.tx.push(op_.sub.op, item.value, now, item.signal, /*stream=*/false, frame_bytes);
    }
    tx_lanes_.push(c.lane, m);
    return Step::kSent;
  });
}

// Sends c's ack now if its lane has room; false if it must wait.
bool Node::send_ack(Channel& c, uint64_t now) {
  if (!tx_lanes_.room(c.lane, link_bytes_ + hdr_ack_, now)) return false;
  rte_mbuf* a = build_ack(c);
  if (a == nullptr) return false;
  tx_lanes_.push(c.lane, a);
  counters_.tx_acks.add();
  return true;
}

// Rate control: the lane's controller hears what the ack acknowledged, its
// RTT sample, the queue its frame met on the way there, and any hole it
// revealed; the lane's pacer follows its rate.
void Node::adapt_rate(uint16_t lane, const reliable::SendChannel::AckResult& r, uint64_t now) {
  reliable::RateControl& rc = rates_[lane];
  const uint64_t before = rc.rate_bps();
  uint64_t datagram_bytes = 0;
  const uint64_t sent = tx_lanes_.take_sent_bytes(lane, &datagram_bytes);
  rc.on_sent(sent, datagram_bytes);
  rc.on_acked(r.newly_bytes);
  // First: a timeout this ack shows spurious gives its cut back before the
  // ack's delay sample is judged.
  if (r.spurious_timeout && rc.on_spurious_timeout()) counters_.rate_cut_undone.add();
  const uint64_t judged = rc.rate_bps();
  if (r.path_rtt_ns != 0 && rc.on_rtt(r.path_rtt_ns, now, r.forward_queue_ns)) {
    if (rc.rate_bps() > judged) counters_.rate_raised.add();
    else if (rc.followed_acks()) counters_.rate_cut_window.add();
    else counters_.rate_cut_delay.add();
  }
  if (r.new_holes && rc.on_loss(now)) counters_.rate_cut_loss.add();
  if (rc.rate_bps() != before) rate_changed(lane, now);
  if (lane == 0) counters_.rate_target_us.set(rc.target_delay_ns() / 1000);
}

void Node::rate_timeout(uint16_t lane, uint64_t now) {
  if (!rates_[lane].on_timeout(now)) return;
  counters_.rate_cut_loss.add();
  rate_changed(lane, now);
}

void Node::rate_changed(uint16_t lane, uint64_t now) {
  tx_lanes_.set_rate(lane, rates_[lane].rate_bps(), now);
  if (lane == 0) counters_.rate_mbit.set(rates_[0].rate_bps() / 1'000'000);
}

void Node::send_acks(uint64_t now) {
  acks_.send_due(now, [&](uint32_t ch) { return send_ack(channels_[ch], now); });
}

}  // namespace lanecast::engine
