// Receiving (receiving.h): what a stream's member receives (streams.cc has the whole
// picture): batches from its parent (checked: the parent, the window, the
// records' shapes; the node's channel takes them, Streams::handle_batch),
// reports from its children, batches given up, failures and evictions
// heard, and the gaps it watches.
#include <rte_mbuf.h>

#include <algorithm>
#include <cstring>

#include "engine/auth/frame_auth.h"
#include "engine/checksum/crc32c.h"
#include "engine/stream/batch_format.h"
#include "engine/stream/receiving.h"
#include "engine/stream/streams.h"
#include "engine/wire/stream_body.h"

namespace lanecast::engine::stream {

using algos::Rank;

// ---------------------------------------------------------------- receive

// Reports and eviction notices come as datagrams, and so do batches sent to
// the group address (streams over multicast).
void Receiving::handle_datagram(rte_mbuf* m, const wire::Parsed& p, uint64_t now) {
  if (!(p.flags & (wire::kFlagEvicted | wire::kFlagSignal))) return handle_stream_multicast(m, p, now);
  if (p.flags & wire::kFlagEvicted) handle_stream_eviction(p);
  else handle_stream_report(p, now);
  rte_pktmbuf_free(m);
}

StreamState* Receiving::checked_stream_batch(rte_mbuf* m, const wire::Parsed& p, uint64_t now) {
  const auto d = wire::stream_body<wire::StreamBatch>(p);
  // Every refusal is counted under its reason, and the frame given back.
  // Nothing is kept for a stream - not even its slot - before its frame
  // came from the stream's parent and holds well-formed records.
  auto drop = [&]() -> StreamState* {
    rte_pktmbuf_free(m);
    return nullptr;
  };
  const std::optional<uint16_t> slot = core_.table.slot(d.publisher, d.stream);
  const bool from_parent = slot && p.src == algos::StreamTree(core_.cfg.nodes, d.publisher, core_.cfg.rank, core_.cfg.streams.fanout).parent();
  if (core_.failed && from_parent) tell_failed(p, now);
  if (core_.failed || !from_parent || d.payload_len > core_.cfg.segment_bytes || d.payload_len < kHeadBytes ||
      d.segment_bytes != core_.cfg.segment_bytes) {
    core_.counters.rx_stream_bad.add();
    return drop();
  }
  // The payload must be one contiguous buffer (as every port here gives it).
  const bool chained = m->data_len == p.payload_offset && m->next != nullptr;
  const rte_mbuf* body = chained ? m->next : m;
  const uint32_t body_off = chained ? 0 : p.payload_offset;
  if (body->next != nullptr || body->data_len != body_off + d.payload_len) {
    core_.counters.rx_stream_bad.add();
    return drop();
  }
  const uint8_t* bytes = rte_pktmbuf_mtod_offset(body, const uint8_t*, body_off);
  // Its CRC, or with a key its seal (which stands in for the CRC).
  if (frames_.auth() == nullptr && crc32c(0, bytes, d.payload_len) != d.payload_crc) {
    core_.shared.bad_payload_crc.add();
    return drop();
  }
  if (!core_.host.seal_ok(bytes, d.payload_len, p)) return drop();  // counted
  if (d.records > UINT32_MAX || !records_valid(bytes, d.payload_len, static_cast<uint32_t>(d.records))) {
    core_.counters.rx_stream_bad.add();
    return drop();
  }
  return open(*slot, d.publisher, static_cast<uint16_t>(d.stream), now);
}

// Where a checked batch falls: new and within the window, held already
// (or delivered and let go), or past the window.
Receiving::BatchFit Receiving::batch_fit(const StreamState& s, uint64_t batch) {
  // Behind what it delivered: unwrap()'s distance is signed (near the
  // stream's start a batch "behind" wraps below 0).
  if (static_cast<int64_t>(batch - s.deliver.next) < 0 || batch < s.released || s.holds(batch)) return BatchFit::Held;
  if (batch >= s.released + s.slots.size()) return BatchFit::Ahead;
  return BatchFit::New;
}

// A new batch, however it came: kept, delivered as far as it goes, marks moved.
void Receiving::keep_stream_batch(StreamState& s, uint64_t batch, rte_mbuf* m, const wire::Parsed& p, uint64_t now) {
  const auto d = wire::stream_body<wire::StreamBatch>(p);
  core_.counters.stream_batches_rx.add();
  hold_batch(s, batch, core_.host.detach_payload(m, p.payload_offset), d.payload_len, d.payload_crc, p.payload_seal,
             static_cast<uint32_t>(d.records), d.first_msg, now);
  deliver_stream(s, now);
  update_marks(s, now);
}

void Receiving::handle_stream_report(const wire::Parsed& p, uint64_t now) {
  const auto d = wire::stream_body<wire::StreamReport>(p);
  StreamState* s = core_.table.find(d.publisher, d.stream);
  const uint32_t i = s == nullptr ? 0 : s->tree.child_index(p.src);
  if (s == nullptr || i == s->tree.children()) {
    core_.counters.rx_stream_bad.add();
    return;
  }
  if (p.flags & wire::kFlagAbandoned) {  // the child's streams failed (tell_parents): ours cannot complete
    core_.counters.rx_stream_child_failed.add();
    streams_.fail(now, OpError::NoProgress, p.src);
    return;
  }
  // A child can have delivered or hold only what was sent to it. A report
  // that says more (forged from its address) would let go batches it never
  // had - the last ones with no later batch to show it a gap, so it would
  // wait for them unaware, and nobody would hear of it.
  const uint64_t sent = s->sent_to_child(i);
  if (d.delivered > sent) {
    core_.counters.rx_stream_bad.add();
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
  uint64_t& lacks_since = s->books.child_lacks_since[i];
  if (std::max(d.delivered, d.held) < s->released) {
    core_.counters.rx_stream_contradicted.add();
    if (lacks_since == SubtreeBooks::kNoTime) lacks_since = now;
    else if (now >= lacks_since + kChildLacksNs) streams_.fail(now, OpError::NoProgress, p.src);
    return;
  }
  lacks_since = SubtreeBooks::kNoTime;
  core_.counters.stream_reports_rx.add();
  if (d.slowest < core_.cfg.nodes) s->books.child_slowest[i] = d.slowest;
  if (d.delivered > s->books.child_mark[i]) s->books.child_mark[i] = d.delivered;
  if (d.held <= sent && d.held >= s->books.child_held[i]) {
    s->books.child_held[i] = d.held;
    s->books.child_gap[i] = std::min<uint64_t>(d.gap, sent - d.held);
  }
  update_marks(*s, now);
}

// A batch its parent gave up (sent again empty: abandoned): the parent's
// streams failed, or it let the batch go because the reports said this
// member's subtree delivered it. A batch this member lacks will then never
// come from anywhere: its streams fail now, naming the parent, instead of
// waiting at the gap for ever (the publisher in WouldBlock above it).
void Receiving::given_up(const wire::Parsed& p, uint64_t now) {
  const auto d = wire::stream_body<wire::StreamBatch>(p);
  const std::optional<uint16_t> slot = core_.table.slot(d.publisher, d.stream);
  if (!slot || d.publisher == core_.cfg.rank ||
      p.src != algos::StreamTree(core_.cfg.nodes, d.publisher, core_.cfg.rank, core_.cfg.streams.fanout).parent()) {
    core_.counters.rx_stream_bad.add();
    return;
  }
  if (core_.failed) return tell_failed(p, now);
  if (const StreamState* s = core_.table.at(*slot)) {
    const uint64_t batch = s->unwrap(d.batch_low);
    if (batch < s->deliver.next || s->holds(batch)) return;  // it has it
  }
  core_.counters.rx_stream_given_up.add();
  streams_.fail(now, OpError::NoProgress, p.src);
  tell_failed(p, now);
}

// This member's streams failed: the parent that sent a stream's frame hears
// it (a report flagged abandoned) at once, whether or not this member holds
// anything of that stream - tell_parents knows only the streams it holds,
// and a parent whose frames were all acknowledged (batches it gave up are)
// has nothing else to time out on.
void Receiving::tell_failed(const wire::Parsed& p, uint64_t now) {
  const auto d = wire::stream_body<wire::StreamBatch>(p);  // a batch, or one given up
  frames_.report_to(p.src, d.publisher, static_cast<uint16_t>(d.stream), 0, core_.cfg.rank, wire::kFlagAbandoned, now);
}

// A gap - a batch missing while later ones are held - is filled by the
// parent's channel sending it again within a few round trips. One that
// stays for the peer timeout will not be filled (the channel took the batch
// as delivered: a bug, or a forger without a group key): the streams fail,
// naming the parent, instead of waiting for ever.
void Receiving::watch_gap(StreamState& s, uint64_t now) {
  if (s.deliver.missing == DeliveryPosition::kNoBatch || s.deliver.missing >= s.received_end) {
    s.deliver.gap = DeliveryPosition::kNoBatch;  // no gap: nothing beyond it is here yet
    return;
  }
  if (s.deliver.gap != s.deliver.missing) {
    s.deliver.gap = s.deliver.missing;
    s.deliver.gap_since_ns = now;
    return;
  }
  if (now > s.deliver.gap_since_ns + core_.cfg.peer_timeout_ns) {
    core_.counters.stream_gap_timeouts.add();
    streams_.fail(now, OpError::NoProgress, s.tree.parent());
  }
}

// Slow members (StreamOptions::evict_after_ms): this member's application
// took none of its messages for the deadline, with the ring full. Rather
// than hold the publisher back any longer it leaves the stream: it delivers
// nothing more (its application learns it from stream_status()), still
// forwards every batch to the members below it and reports their progress,
// and tells every other member.
void Receiving::evict_self(StreamState& s, uint64_t now) {
  s.evicted = true;
  s.mirror.evicted.store(true, std::memory_order_release);
  evicted_.store(true, std::memory_order_release);
  core_.counters.stream_evicted.add();
  deliver_stream(s, now);  // what is here already moves it on
}

void Receiving::handle_stream_eviction(const wire::Parsed& p) {
  const auto d = wire::stream_body<wire::StreamEviction>(p);
  StreamState* s = core_.table.find(d.publisher, d.stream);
  if (s == nullptr || d.member != p.src) {  // a member tells of itself only
    core_.counters.rx_stream_bad.add();
    return;
  }
  if (s->heard_evicted.empty()) s->heard_evicted.assign(core_.cfg.nodes, false);  // once per stream, control path
  if (s->heard_evicted[p.src]) return;  // a copy of the notice
  s->heard_evicted[p.src] = true;
  core_.counters.stream_evictions_heard.add();
  s->mirror.evicted_members.fetch_add(1, std::memory_order_relaxed);
}

// A batch from the group address: the checks any batch passes, then kept
// unless held already (a repair came first, or a copy) or past the window
// (the repair brings it when there is room). Nothing is acknowledged: the
// reports say what arrived.
void Receiving::handle_stream_multicast(rte_mbuf* m, const wire::Parsed& p, uint64_t now) {
  if (!core_.cfg.streams.multicast) {  // this group's streams do not travel so
    core_.counters.rx_stream_bad.add();
    rte_pktmbuf_free(m);
    return;
  }
  StreamState* s = checked_stream_batch(m, p, now);
  if (s == nullptr) return;
  const uint64_t batch = s->unwrap(wire::stream_body<wire::StreamBatch>(p).batch_low);
  switch (batch_fit(*s, batch)) {
    case BatchFit::Held:
      core_.counters.rx_stream_duplicate.add();
      rte_pktmbuf_free(m);
      return;
    case BatchFit::Ahead:
      core_.counters.rx_stream_ahead.add();
      rte_pktmbuf_free(m);
      return;
    case BatchFit::New:
      break;
  }
  core_.counters.stream_multicasts_rx.add();
  keep_stream_batch(*s, batch, m, p, now);
}

}  // namespace lanecast::engine::stream
