// Node: the transmit path. The machine's actions become owed work (runs per
// channel, multicasts in a queue of their own); pump() turns owed work into
// frames - first what must be sent again, then multicasts, then owed sends in
// the order the machine owed its peers - within each channel's window, each
// lane's pacer and the lane's transmit batch; tx_lanes_.flush(port_) hands each lane's
// batch to the port once per iteration.
//
// Owed sends go out in the order the machine asked for them (the stamps of
// owed_runs.h), across peers, as the simulator models it: a forwarder sends
// segment s to each child before segment s+1 to any. Serving one peer's whole
// backlog before the next instead made symmetric's receivers take turns
// flooding one peer at a time (a 300-frame queue on one downlink of a shaped
// 8-node fabric while others idled).
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

// A channel that starts owing joins the heap of those with a flight slab, or
// of those waiting for one; its key is the stamp of its first owed item.
void Node::list_owing(Channel& c) {
  if (c.listed) return;
  c.listed = true;
  auto& heap = c.tx.slab() != nullptr ? ready_ : waiting_;
  heap.push_back(Owing{c.owed.front(runs_).stamp, channel_id(c)});  // capacity reserved
  std::push_heap(heap.begin(), heap.end(), std::greater<>{});
}

void Node::owe(Rank to, SegmentIndex seg, algos::Lane lane) {
  if (to >= cfg_.nodes || to == cfg_.rank || seg >= op_.plan->segments() || lane >= cfg_.lanes) {
    internal_error_ = true;
    return;
  }
  Channel& c = channel(to, lane);
  owed_one(c, c.owed.push(runs_, seg, next_stamp_++));
}

void Node::owe_signal(Rank to, uint32_t tag) {
  if (to >= cfg_.nodes || to == cfg_.rank) {
    internal_error_ = true;
    return;
  }
  Channel& c = channel(to, 0);
  owed_one(c, c.owed.push_signal(runs_, tag, next_stamp_++));
}

// After an item was (or could not be) added to what c owes.
void Node::owed_one(Channel& c, bool pushed) {
  if (!pushed) {
    counters_.owed_runs_exhausted.add();
    internal_error_ = true;
    return;
  }
  ++owed_total_;
  list_owing(c);
}

void Node::multicast(SegmentIndex seg, algos::Lane lane) {
  if (seg >= op_.plan->segments() || lane >= cfg_.lanes) {
    internal_error_ = true;
    return;
  }
  // Sized for one multicast per segment, the most a machine may ask for
  // (algos/machine.h); a machine asking for more loses the extra, counted.
  if (datagram_count_ == datagrams_.size()) {
    counters_.tx_datagrams_dropped.add();
    return;
  }
  datagrams_[(datagram_head_ + datagram_count_++) % datagrams_.size()] = Datagram{seg, lane, 0};
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
  if (seg >= op_.plan->segments() || store_[seg].payload == nullptr || !store_[seg].in_buffer) {
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
  store_[seg] = StoreEntry{m, crc, true, seal};
  counters_.root_copy_bytes.add(s.length);
  return true;
}

// ---------------------------------------------------------------- sending

bool Node::take_slab(Channel& c) {
  reliable::FlightSlab* s = flights_.take();
  if (s == nullptr) return false;
  c.tx.attach(s);
  c.tx.raise_rto(lane_rto_ns_[c.lane]);
  c.active_index = static_cast<uint32_t>(active_.size());
  active_.push_back(channel_id(c));
  return true;
}

void Node::release_slab(Channel& c) {
  flights_.give_back(c.tx.detach());
  const uint32_t last = active_.back();
  active_[c.active_index] = last;
  channels_[last].active_index = c.active_index;
  active_.pop_back();
  c.active_index = UINT32_MAX;
}

void Node::pump(uint64_t now) {
  tx_lanes_.new_turn();
  datagram_blocked_lanes_ = 0;
  if (!resend_.empty()) pump_resends(now);
  if (datagram_count_ > 0) pump_datagrams(now);
  if (owed_total_ > 0) pump_owed(now);
}

// Frames to send again: holes the acks revealed, timeouts, abandoned frames.
void Node::pump_resends(uint64_t now) {
  size_t keep = 0;
  for (size_t i = 0; i < resend_.size(); ++i) {
    Channel& c = channels_[resend_[i]];
    const uint32_t frame = link_bytes_ + hdr_data_ + cfg_.segment_bytes;
    while (c.tx.has_resend() && tx_lanes_.room(c.lane, frame, now)) {
      const uint32_t seq = c.tx.resend_front();
      const reliable::InFlight& e = c.tx.entry(seq);
      rte_mbuf* m = nullptr;
      const bool stream = (e.flags & reliable::InFlight::kStream) != 0;
      // Only the running broadcast's frames are in flight unabandoned.
      const bool gone = !stream && (!op_.active || e.op != op_.sub.op);
      if (stream && !(e.flags & reliable::InFlight::kAbandoned)) {
        m = build_stream(c, static_cast<uint16_t>(e.op), e.segment, seq, wire::kFlagAckNow);
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
    if (c.tx.has_resend()) resend_[keep++] = resend_[i];
    else c.in_resend = false;
  }
  resend_.resize(keep);
}

// Multicasts: one frame to the group address where the port's switch copies,
// otherwise one datagram to each member in turn (the emulation).
void Node::pump_datagrams(uint64_t now) {
  while (datagram_count_ > 0) {
    Datagram& g = datagrams_[datagram_head_];
    if (store_[g.segment].payload == nullptr && !materialize(g.segment)) {
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
      if (!tx_lanes_.room(g.lane, frame, now)) return;
      rte_mbuf* m = build_data(group_addrs_[g.lane], g.segment, 0, g.lane, 0, wire::FrameType::Datagram);
      if (m == nullptr) return;
      tx_lanes_.push(g.lane, m);
      counters_.tx_datagrams.add();
      g.next_rank = cfg_.nodes;
    }
    while (g.next_rank < cfg_.nodes) {
      if (!tx_lanes_.room(g.lane, frame, now)) return;
      rte_mbuf* m = build_data(addrs_[g.next_rank], g.segment, 0, g.lane, 0, wire::FrameType::Datagram);
      if (m == nullptr) return;
      tx_lanes_.push(g.lane, m);
      counters_.tx_datagrams.add();
      if (++g.next_rank == cfg_.rank) ++g.next_rank;
    }
    datagram_head_ = (datagram_head_ + 1) % datagrams_.size();
    --datagram_count_;
  }
  datagram_blocked_lanes_ = 0;
}

// Owed sends in the machine's order, within each channel's windows and each
// lane's pacer: free flight slabs go to the waiting channels owed the
// earliest items, then the channel whose next item is earliest sends it,
// until every channel is blocked or owes nothing.
void Node::pump_owed(uint64_t now) {
  const auto later = std::greater<>{};
  while (!waiting_.empty() && flights_.in_use() < flights_.slabs()) {
    std::pop_heap(waiting_.begin(), waiting_.end(), later);
    const Owing o = waiting_.back();
    waiting_.pop_back();
    take_slab(channels_[o.channel]);
    ready_.push_back(o);
    std::push_heap(ready_.begin(), ready_.end(), later);
  }
  bool lane_blocked[kMaxLanes] = {};
  uint16_t lanes_blocked = 0;
  for (uint16_t l = 0; l < cfg_.lanes; ++l)
    if (datagram_blocked_lanes_ & (1u << l)) {
      lane_blocked[l] = true;
      ++lanes_blocked;
    }
  blocked_.clear();
  while (!ready_.empty() && lanes_blocked < cfg_.lanes) {
    const Owing top = ready_.front();
    Channel& c = channels_[top.channel];
    const OwedItem item = c.owed.front(runs_);
    // A batch let go before it was sent here: the reports say this peer's
    // subtree delivered it (as pump_resends takes them to). Nothing to send,
    // and what is owed behind it must not wait for it for ever.
    const bool let_go = item.is_stream() && !stream_holds(item.stream, item.value);
    uint32_t payload = 0;
    if (item.is_stream()) {
      const stream::StreamState& s = *stream_slots_[item.stream];
      payload = s.slots[item.value & s.mask].len;
    } else if (!item.signal) {
      payload = op_.plan->segment(item.value).length;
    }
    bool sent = false;
    if (let_go) {
      c.owed.pop(runs_);
      --owed_total_;
      --stream_owed_;
      sent = true;  // the channel moves on to its next item
    } else if (!lane_blocked[c.lane] && c.tx.window_open()) {
      if (!tx_lanes_.room(c.lane, link_bytes_ + hdr_data_ + payload, now)) {
        lane_blocked[c.lane] = true;
        ++lanes_blocked;
      } else {
        // Ask for an ack at once when this is the last frame we have for the
        // peer in this broadcast, or when it fills the window.
        const bool last = !item.is_stream() && c.owed.size() == 1 && op_.machine->done();
        const uint16_t flags = last || c.tx.last_in_window() ? wire::kFlagAckNow : 0;
        rte_mbuf* m = nullptr;
        if (item.is_stream()) {
          m = build_stream(c, item.stream, item.value, c.tx.next_seq(), flags);
          if (m != nullptr) counters_.stream_batches_tx.add();
        } else if (item.signal) {
          m = build_signal(c, item.value, c.tx.next_seq(), flags);
          if (m != nullptr) counters_.tx_signals.add();
        } else if (store_[item.value].payload != nullptr || materialize(item.value)) {
          m = build_data(addrs_[c.peer], item.value, c.tx.next_seq(), c.lane, flags);
          if (m != nullptr) {
            counters_.tx_data.add();
            counters_.tx_data_lane[c.lane].add();
          }
        } else if (op_.sub.root != cfg_.rank) {
          internal_error_ = true;  // sending what it lacks
        }
        if (m == nullptr) break;  // a pool is empty: try again next iteration
        peer_counters_[c.peer].tx_data.add();
        if (c.tx.idle()) note_deadline(now + c.tx.timeout_ns());
        if (item.is_stream()) {
          c.tx.push(item.stream, item.value, now, false, /*stream=*/true);
          --stream_owed_;
          ++stream_unacked_;
        } else {
          c.tx.push(op_.sub.op, item.value, now, item.signal);
        }
        c.owed.pop(runs_);
        --owed_total_;
        ++unacked_total_;
        tx_lanes_.push(c.lane, m);
        sent = true;
      }
    }
    if (sent && !c.owed.empty() && ready_.size() == 1) {
      ready_.front().stamp = c.owed.front(runs_).stamp;  // one channel owing (a chain): no heap work
      continue;
    }
    std::pop_heap(ready_.begin(), ready_.end(), later);
    ready_.pop_back();
    if (!sent) {
      blocked_.push_back(top);
    } else if (c.owed.empty()) {
      c.listed = false;
      if (c.tx.idle()) release_slab(c);  // nothing in flight either (all it owed was let go): no ack will free it
    } else {
      ready_.push_back(Owing{c.owed.front(runs_).stamp, top.channel});
      std::push_heap(ready_.begin(), ready_.end(), later);
    }
  }
  for (const Owing& o : blocked_) {
    ready_.push_back(o);
    std::push_heap(ready_.begin(), ready_.end(), later);
  }
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

void Node::send_acks(uint64_t now) {
  acks_.send_due(now, [&](uint32_t ch) { return send_ack(channels_[ch], now); });
}

}  // namespace lanecast::engine
