// Node: what a stream's member receives and says (node_stream.cc has the
// whole picture): batches from its parent (checked: the parent, the window,
// the records' shapes), reports from its children, batches given up,
// failures and evictions heard; its own reports up the tree; the frames that
// carry a held batch to a child.
#include <rte_mbuf.h>

#include <algorithm>
#include <cstring>

#include "engine/auth/frame_auth.h"
#include "engine/checksum/crc32c.h"
#include "engine/node/node.h"

namespace lanecast::engine {

using algos::Rank;
using stream::BatchSlot;
using stream::kHeadBytes;
using stream::RecordHead;
using stream::StreamState;

// A report to the parent: a datagram (never acknowledged: the next one
// carries everything this one did). `flags` kFlagAbandoned: this member's
// streams failed (tell_parents).
bool Node::send_report(StreamState& s, uint64_t now, uint16_t flags) {
  const uint64_t held = std::max(s.held_end, s.deliver_next);
  uint32_t gap = 0;  // batches missing from `held` on, with a later one here
  if (cfg_.streams.multicast)
    while (held + gap < s.received_end && !s.holds(held + gap)) ++gap;
  if (!report_to(s.tree.parent(), s.publisher, s.index, s.subtree_mark, s.subtree_slowest, flags, now, held, gap))
    return false;
  s.reported_held = held;
  s.reported = s.subtree_mark;
  s.last_report_ns = now;
  return true;
}

// `mark`: every batch below it delivered in this member's subtree;
// `slowest`: who holds the mark back, for the publisher's counters.
bool Node::report_to(Rank parent, Rank publisher, uint16_t index, uint64_t mark, uint32_t slowest, uint16_t flags,
                     uint64_t now, uint64_t held, uint32_t gap) {
  if (parent == algos::kNoRank || !tx_lanes_.room(0, link_bytes_ + hdr_data_, now)) return false;
  uint8_t* at;
  rte_mbuf* h = alloc_frame(addrs_[parent], hdr_data_, &at);
  if (h == nullptr) return false;
  wire::DataBody b{};
  b.op = index;
  b.root = publisher;
  b.offset = mark;
  b.segment = slowest;
  // Streams over multicast: what to repair (stream_multicast.cc) - what it
  // holds, and its first gap (a datagram's seq is free).
  b.total_len = held;
  b.seq = gap;
  b.segment_bytes = cfg_.segment_bytes;
  wire::write_data(at, origin(), b, static_cast<uint16_t>(flags | wire::kFlagStream | wire::kFlagSignal | seal_flag_),
                   wire::FrameType::Datagram);
  put_payload_seal(at, wire::Seal{});
  tx_lanes_.push(0, h);
  counters_.stream_reports_tx.add();
  return true;
}


// ---------------------------------------------------------------- receive

StreamState* Node::checked_stream_batch(rte_mbuf* m, const wire::Parsed& p, uint64_t now) {
  const wire::DataBody& d = p.data;
  // Every refusal is counted under its reason, and the frame given back.
  // Nothing is kept for a stream - not even its slot - before its frame
  // came from the stream's parent and holds well-formed records.
  auto drop = [&]() -> StreamState* {
    rte_pktmbuf_free(m);
    return nullptr;
  };
  const std::optional<uint16_t> slot = streams_.slot(d.root, d.op);
  const bool from_parent = slot && p.src == algos::StreamTree(cfg_.nodes, d.root, cfg_.rank, cfg_.streams.fanout).parent();
  if (streams_failed_ && from_parent) tell_failed(p, now);
  if (streams_failed_ || !from_parent || d.payload_len > cfg_.segment_bytes || d.payload_len < kHeadBytes ||
      d.segment_bytes != cfg_.segment_bytes) {
    counters_.rx_stream_bad.add();
    return drop();
  }
  // The payload must be one contiguous buffer (as every port here gives it).
  const bool chained = m->data_len == p.payload_offset && m->next != nullptr;
  const rte_mbuf* body = chained ? m->next : m;
  const uint32_t body_off = chained ? 0 : p.payload_offset;
  if (body->next != nullptr || body->data_len != body_off + d.payload_len) {
    counters_.rx_stream_bad.add();
    return drop();
  }
  const uint8_t* bytes = rte_pktmbuf_mtod_offset(body, const uint8_t*, body_off);
  // Its CRC, or with a key its seal (which stands in for the CRC).
  if (auth_ == nullptr && crc32c(0, bytes, d.payload_len) != d.payload_crc) {
    counters_.rx_malformed[static_cast<size_t>(wire::Verdict::BadPayloadCrc)].add();
    return drop();
  }
  if (!seal_ok(bytes, d.payload_len, p)) return drop();  // counted
  if (d.total_len > UINT32_MAX || !stream::records_valid(bytes, d.payload_len, static_cast<uint32_t>(d.total_len))) {
    counters_.rx_stream_bad.add();
    return drop();
  }
  return open_stream_state(*slot, d.root, static_cast<uint16_t>(d.op), now);
}

// Where a checked batch falls: new and within the window, held already
// (or delivered and let go), or past the window.
Node::BatchFit Node::batch_fit(const StreamState& s, uint64_t batch) {
  // Behind what it delivered: unwrap()'s distance is signed (near the
  // stream's start a batch "behind" wraps below 0).
  if (static_cast<int64_t>(batch - s.deliver_next) < 0 || batch < s.released || s.holds(batch)) return BatchFit::Held;
  if (batch >= s.released + s.slots.size()) return BatchFit::Ahead;
  return BatchFit::New;
}

// A new batch, however it came: kept, delivered as far as it goes, marks moved.
void Node::keep_stream_batch(StreamState& s, uint64_t batch, rte_mbuf* m, const wire::Parsed& p, uint64_t now) {
  const wire::DataBody& d = p.data;
  counters_.stream_batches_rx.add();
  hold_batch(s, batch, detach_payload(m, p.payload_offset), d.payload_len, d.payload_crc, p.payload_seal,
             static_cast<uint32_t>(d.total_len), d.offset, now);
  deliver_stream(s, now);
  update_marks(s, now);
}

void Node::handle_stream_batch(rte_mbuf* m, const wire::Parsed& p, Channel& c, uint64_t now) {
  StreamState* s = checked_stream_batch(m, p, now);
  if (s == nullptr) return;
  const wire::DataBody& d = p.data;
  const uint64_t batch = s->unwrap(d.segment);
  switch (batch_fit(*s, batch)) {
    case BatchFit::Held:
      c.rx.accept(d.seq);  // had it: take it off the sender's hands
      acks_.ack_now(channels_.id_of(c));
      counters_.rx_stream_duplicate.add();
      rte_pktmbuf_free(m);
      return;
    case BatchFit::Ahead:  // not acknowledged: the sender tries again
      counters_.rx_stream_ahead.add();
      rte_pktmbuf_free(m);
      return;
    case BatchFit::New:
      break;
  }
  acks_.accepted(channels_.id_of(c), (p.flags & wire::kFlagAckNow) != 0, c.rx.accept(d.seq), now);
  keep_stream_batch(*s, batch, m, p, now);
}

void Node::handle_stream_report(const wire::Parsed& p, uint64_t now) {
  const wire::DataBody& d = p.data;
  StreamState* s = streams_.find(d.root, d.op);
  const uint32_t i = s == nullptr ? 0 : s->tree.child_index(p.src);
  if (s == nullptr || i == s->tree.children()) {
    counters_.rx_stream_bad.add();
    return;
  }
  if (p.flags & wire::kFlagAbandoned) {  // the child's streams failed (tell_parents): ours cannot complete
    counters_.rx_stream_child_failed.add();
    fail_streams(now, OpError::NoProgress, p.src);
    return;
  }
  // A child can have delivered or hold only what was sent to it. A report
  // that says more (forged from its address) would let go batches it never
  // had - the last ones with no later batch to show it a gap, so it would
  // wait for them unaware, and nobody would hear of it.
  const uint64_t sent = s->sent_to_child(i);
  if (d.offset > sent) {
    counters_.rx_stream_bad.add();
    return;
  }
  // A child says it lacks a batch let go here, which needs an earlier report
  // saying its subtree delivered it. A child's own reports only move
  // forward, but the network may hand over an old one late (reordered, or a
  // copy): only reports that keep saying so for kChildLacksNs - a stalled
  // child repeats its report every millisecond - mean one was forged. That
  // batch can come from nowhere now: the streams fail, naming the child,
  // instead of the child waiting for it unheard (over multicast the
  // publisher cannot know what the child got from the group address, so
  // this is how it learns).
  uint64_t& lacks_since = s->child_lacks_since[i];
  if (std::max(d.offset, d.total_len) < s->released) {
    counters_.rx_stream_contradicted.add();
    if (lacks_since == StreamState::kNoTime) lacks_since = now;
    else if (now >= lacks_since + kChildLacksNs) fail_streams(now, OpError::NoProgress, p.src);
    return;
  }
  lacks_since = StreamState::kNoTime;
  counters_.stream_reports_rx.add();
  if (d.segment < cfg_.nodes) s->child_slowest[i] = d.segment;
  if (d.offset > s->child_mark[i]) s->child_mark[i] = d.offset;
  if (d.total_len <= sent && d.total_len >= s->child_held[i]) {
    s->child_held[i] = d.total_len;
    s->child_gap[i] = std::min<uint64_t>(d.seq, sent - d.total_len);
  }
  update_marks(*s, now);
}

// A batch its parent gave up (sent again empty: abandoned): the parent's
// streams failed, or it let the batch go because the reports said this
// member's subtree delivered it. A batch this member lacks will then never
// come from anywhere: its streams fail now, naming the parent, instead of
// waiting at the gap for ever (the publisher in WouldBlock above it).
void Node::stream_given_up(const wire::Parsed& p, uint64_t now) {
  const wire::DataBody& d = p.data;
  const std::optional<uint16_t> slot = streams_.slot(d.root, d.op);
  if (!slot || d.root == cfg_.rank ||
      p.src != algos::StreamTree(cfg_.nodes, d.root, cfg_.rank, cfg_.streams.fanout).parent()) {
    counters_.rx_stream_bad.add();
    return;
  }
  if (streams_failed_) return tell_failed(p, now);
  if (const StreamState* s = streams_.at(*slot)) {
    const uint64_t batch = s->unwrap(d.segment);
    if (batch < s->deliver_next || s->holds(batch)) return;  // it has it
  }
  counters_.rx_stream_given_up.add();
  fail_streams(now, OpError::NoProgress, p.src);
  tell_failed(p, now);
}

// This member's streams failed: the parent that sent a stream's frame hears
// it (a report flagged abandoned) at once, whether or not this member holds
// anything of that stream - tell_parents knows only the streams it holds,
// and a parent whose frames were all acknowledged (batches it gave up are)
// has nothing else to time out on.
void Node::tell_failed(const wire::Parsed& p, uint64_t now) {
  report_to(p.src, p.data.root, static_cast<uint16_t>(p.data.op), 0, cfg_.rank, wire::kFlagAbandoned, now);
}

// A gap - a batch missing while later ones are held - is filled by the
// parent's channel sending it again within a few round trips. One that
// stays for the peer timeout will not be filled (the channel took the batch
// as delivered: a bug, or a forger without a group key): the streams fail,
// naming the parent, instead of waiting for ever.
void Node::watch_gap(StreamState& s, uint64_t now) {
  if (s.missing == StreamState::kNoBatch || s.missing >= s.received_end) {
    s.gap = StreamState::kNoBatch;  // no gap: nothing beyond it is here yet
    return;
  }
  if (s.gap != s.missing) {
    s.gap = s.missing;
    s.gap_since_ns = now;
    return;
  }
  if (now > s.gap_since_ns + cfg_.peer_timeout_ns) {
    counters_.stream_gap_timeouts.add();
    fail_streams(now, OpError::NoProgress, s.tree.parent());
  }
}

// Slow members (StreamOptions::evict_after_ms): this member's application
// took none of its messages for the deadline, with the ring full. Rather
// than hold the publisher back any longer it leaves the stream: it delivers
// nothing more (its application learns it from stream_status()), still
// forwards every batch to the members below it and reports their progress,
// and tells every other member.
void Node::evict_self(StreamState& s, uint64_t now) {
  s.evicted = true;
  s.mirror.evicted.store(true, std::memory_order_release);
  stream_evicted_.store(true, std::memory_order_release);
  counters_.stream_evicted.add();
  deliver_stream(s, now);  // what is here already moves it on
}

// The notice, to each other member in turn (datagrams: one that finds the
// lane's batch full waits for the next turn).
void Node::tell_eviction(StreamState& s, uint64_t now) {
  for (; s.evict_notice_next < cfg_.nodes; ++s.evict_notice_next) {
    const Rank to = s.evict_notice_next;
    if (to == cfg_.rank) continue;
    if (!tx_lanes_.room(0, link_bytes_ + hdr_data_, now)) return;
    uint8_t* at;
    rte_mbuf* h = alloc_frame(addrs_[to], hdr_data_, &at);
    if (h == nullptr) return;
    wire::DataBody b{};
    b.op = s.index;
    b.root = s.publisher;
    b.segment = cfg_.rank;
    b.segment_bytes = cfg_.segment_bytes;
    wire::write_data(at, origin(), b, wire::kFlagStream | wire::kFlagSignal | wire::kFlagEvicted | seal_flag_,
                     wire::FrameType::Datagram);
    put_payload_seal(at, wire::Seal{});
    tx_lanes_.push(0, h);
  }
}

void Node::handle_stream_eviction(const wire::Parsed& p) {
  const wire::DataBody& d = p.data;
  StreamState* s = streams_.find(d.root, d.op);
  if (s == nullptr || d.segment != p.src) {  // a member tells of itself only
    counters_.rx_stream_bad.add();
    return;
  }
  if (s->heard_evicted.empty()) s->heard_evicted.assign(cfg_.nodes, false);  // once per stream, control path
  if (s->heard_evicted[p.src]) return;  // a copy of the notice
  s->heard_evicted[p.src] = true;
  counters_.stream_evictions_heard.add();
  s->mirror.evicted_members.fetch_add(1, std::memory_order_relaxed);
}


// ---------------------------------------------------------------- frames

bool Node::stream_holds(uint16_t slot, uint32_t batch_low) const {
  const StreamState& s = *streams_.at(slot);
  const BatchSlot& b = s.slots[batch_low & s.mask];
  return b.payload != nullptr && static_cast<uint32_t>(b.batch) == batch_low;
}

// A batch went to a child over its channel: the child's reports may now
// say it has it (StreamState::sent_to_child).
void Node::note_sent_to_child(StreamState& s, Rank child, uint32_t batch_low) {
  const uint32_t i = s.tree.child_index(child);
  if (i == s.tree.children()) return;  // a repair's channel is always a child's; nothing else sends batches
  s.child_sent[i] = std::max(s.child_sent[i], s.unwrap(batch_low) + 1);
}

rte_mbuf* Node::build_stream(const Channel& c, uint16_t slot, uint32_t batch_low, uint32_t seq, uint16_t flags) {
  if (!stream_holds(slot, batch_low)) return nullptr;
  const StreamState& s = *streams_.at(slot);
  return build_batch_frame(addrs_[c.peer], s, s.slots[batch_low & s.mask], seq, static_cast<uint8_t>(c.lane), flags,
                           wire::FrameType::Data);
}

// A batch's frame: its header, then the held payload by reference.
rte_mbuf* Node::build_batch_frame(const drivers::PeerAddress& to, const StreamState& s, const BatchSlot& b, uint32_t seq,
                                  uint8_t lane, uint16_t flags, wire::FrameType type) {
  uint8_t* at;
  rte_mbuf* h = alloc_frame(to, hdr_data_, &at);
  if (h == nullptr) return nullptr;
  wire::DataBody body{};
  body.op = s.index;
  body.root = s.publisher;
  body.seq = seq;
  body.segment = static_cast<uint32_t>(b.batch);
  body.offset = b.first_msg;
  body.total_len = b.records;
  body.payload_len = b.len;
  body.payload_crc = b.crc;
  body.segment_bytes = cfg_.segment_bytes;
  body.lane = lane;
  wire::write_data(at, origin(), body, static_cast<uint16_t>(flags | wire::kFlagStream | seal_flag_), type);
  put_payload_seal(at, b.seal);
  return attach_payload(h, b.payload);
}

}  // namespace lanecast::engine
