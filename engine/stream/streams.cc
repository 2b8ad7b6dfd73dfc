// Streams (streams.h, docs/streams.md). A publisher's messages wait in a
// ring its application fills (stream_state.h); at each turn the core cuts
// whatever is there into batches - as many messages per frame as fit,
// pieces of larger ones, nothing held back to wait for more - keeps each
// batch in a slot of the stream's window, delivers it here and owes it to
// its children in the stream's tree (algos/topology/stream_tree.h). A member
// that receives a batch from its parent keeps it the same way, forwards the
// same buffer to its own children (zero-copy) and delivers in batch order.
// Batches travel on the reliable channels the broadcasts use, beside them.
//
// Progress flows back up the tree: each member reports to its parent the
// batch below which its whole subtree delivered (a datagram; reports are
// cumulative, so a lost one is made good by the next, and a member repeats
// its last one every millisecond while the stream is busy). A batch is let go
// once the subtree below a member delivered it; the publisher's "stable"
// point is the whole group's, and its application may publish only a window
// ahead of it.
#include "engine/stream/streams.h"

#include <rte_mbuf.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "engine/auth/frame_auth.h"
#include "engine/checksum/crc32c.h"
#include "engine/stream/batch_format.h"

namespace lanecast::engine::stream {

using algos::Rank;

namespace {

constexpr uint64_t kRefreshNs = 1'000'000;        // repeat a report this often while busy
constexpr uint64_t kRefreshForNs = 50'000'000;    // ... for this long after the stream's last batch

// The table's shape, the stream options checked.
StreamTable::Shape shape_of(const Streams::Config& cfg) {
  const lanecast::StreamOptions& so = cfg.streams;
  if (so.window_batches < 16 || so.window_batches > 65536 || (so.window_batches & (so.window_batches - 1)) != 0 ||
      so.streams_per_member < 1 || so.streams_per_member > lanecast::kMaxStreamsPerMember || so.window_messages == 0)
    throw std::invalid_argument("node: stream options out of range (fanout >= 1, window_batches a power of two 16..65536, "
                                "streams_per_member 1.." + std::to_string(lanecast::kMaxStreamsPerMember) + ")");
  if (so.window_bytes < 4096 || so.delivery_bytes < 4096)
    throw std::invalid_argument("node: stream window_bytes and delivery_bytes must be at least 4096");
  return {cfg.nodes, cfg.rank, so.streams_per_member, so.fanout, so.window_batches};
}

}  // namespace

Streams::Streams(const Config& cfg, StreamHost& host, StreamCounters& counters, const SharedCounters& shared)
    : cfg_(cfg),
      host_(host),
      counters_(counters),
      shared_(shared),
      delivery_(counters.stream_delivery),
      table_(shape_of(cfg)) {}

// Streams over multicast go to the group address only when the port joined
// one; a quiet stream's repairs wait multicast_repair_us (default: ten
// report intervals).
void Streams::connect(const Frames& f) {
  auth_ = f.auth;
  seal_flag_ = f.seal_flag;
  hdr_data_ = f.hdr_data;
  link_bytes_ = f.link_bytes;
  payload_pool_ = f.payload_pool;
  addrs_ = f.addrs;
  if (f.group != nullptr) group_addr_ = *f.group;
  stream_multicast_ = cfg_.streams.multicast && f.group != nullptr;
  stream_repair_ns_ = static_cast<uint64_t>(
      (cfg_.streams.multicast_repair_us > 0 ? cfg_.streams.multicast_repair_us : 10 * cfg_.streams.report_us) * 1000);
}

// The largest message a stream carries: what the group allows, what half
// the publisher's ring and half a delivery ring hold, what the window of
// batches holds at once, and never more than kMaxMessage, so a
// record's 32-bit length (the rings' and the wire's) holds it with its heads
// (docs/streams.md).
//
// The window's bound: a message is delivered only once every piece is
// here, and its first batch is let go only after that, so all its batches
// must fit the window together - the first piece may be one byte at the end
// of a batch, every other batch carries a full piece. A larger message
// would leave the publisher waiting for a window that never opens.
uint64_t Streams::max_message() const {
  const lanecast::StreamOptions& o = cfg_.streams;
  const uint64_t ring = o.window_bytes / 2 > 64 ? o.window_bytes / 2 - 64 : 0;
  const uint64_t delivery = o.delivery_bytes / 2 > 64 ? o.delivery_bytes / 2 - 64 : 0;
  const uint64_t piece = cfg_.segment_bytes > kHeadBytes ? cfg_.segment_bytes - kHeadBytes : 0;
  const uint64_t window = uint64_t{o.window_batches - 2} * piece;
  return std::min({cfg_.max_message_bytes, ring, delivery, window, kMaxMessage});
}

void Streams::take_publishers(uint64_t now) {
  publishers_.adopt([&](PublisherShared& p) {
    if (streams_failed_) {  // opened after this member's streams failed: told now, as the others were
      p.error_peer.store(stream_error_peer_.load(std::memory_order_relaxed), std::memory_order_relaxed);
      p.error.store(stream_error_.load(std::memory_order_relaxed), std::memory_order_release);
      return;
    }
    const std::optional<uint16_t> slot = table_.slot(cfg_.rank, p.index);
    if (!slot) {  // an index Member::open_stream refuses: the publisher's error
      p.error.store(static_cast<uint8_t>(OpError::Internal), std::memory_order_release);
      return;
    }
    StreamState* s = open_stream_state(*slot, cfg_.rank, p.index, now);
    s->pub.shared = &p;
    s->pub.ring = RecordRing(p.ring);
  });
}

// A stream this member starts taking part in (table_ makes its state:
// its window of slots, its place in the tree), its share of the owed runs
// and (the first time) the delivery ring. Done once per stream, on its
// first frame: the only allocations streams make.
StreamState* Streams::open_stream_state(uint16_t slot, Rank publisher, uint16_t index, uint64_t now) {
  bool opened = false;
  StreamState& s = table_.open(slot, publisher, index, now, &opened);
  if (!opened) return &s;
  // The batches owed to one child merge into runs unless other sends come
  // between them: at worst a run per batch of the window, per child.
  host_.grow_runs(cfg_.streams.window_batches * s.tree.children());
  delivery_.open(cfg_.streams.delivery_bytes, max_message());
  return &s;
}

// ---------------------------------------------------------------- publisher

// Cuts the messages waiting in the publisher's ring into one batch (all of
// them if they fit, else as much as fits, a large message in pieces). False
// when there is nothing to send or no slot free in the window.
bool Streams::form_batch(StreamState& s, uint64_t now) {
  if (s.pub.next_batch - s.released >= s.slots.size()) return false;  // the window is full: wait for reports
  if (stream_multicast_ && s.mcast.next > 0 && !multicast_may_form(s, now)) return false;
  RecordView r = s.pub.ring.peek();
  if (r.data == nullptr) {
    if (s.pub.ring.corrupt()) fail(now, OpError::Internal, cfg_.rank);
    return false;
  }
  rte_mbuf* m = rte_pktmbuf_alloc(payload_pool_);
  uint8_t* dst = m == nullptr ? nullptr : reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, static_cast<uint16_t>(cfg_.segment_bytes)));
  if (dst == nullptr) {
    if (m != nullptr) rte_pktmbuf_free(m);
    shared_.tx_alloc_failures.add();
    return false;
  }
  const uint64_t first_msg = s.pub.next_msg;
  uint32_t used = 0, records = 0, crc = 0;
  while (r.data != nullptr) {
    if (r.len < 8) {  // the application side writes a timestamp first, always
      fail(now, OpError::Internal, cfg_.rank);
      rte_pktmbuf_free(m);
      return false;
    }
    uint64_t ts;
    std::memcpy(&ts, r.data, 8);
    const uint32_t msg_len = r.len - 8;
    const uint32_t remaining = msg_len - s.pub.offset;
    if (cfg_.segment_bytes - used < kHeadBytes + (remaining > 0 ? 1 : 0)) break;
    const uint32_t piece = std::min(remaining, cfg_.segment_bytes - used - kHeadBytes);
    RecordHead h;
    h.piece = piece | (s.pub.offset > 0 ? kContinuation : 0) | (piece < remaining ? kMorePieces : 0);
    h.message_len = msg_len;
    h.timestamp_ns = ts;
    write_head(dst + used, h);
    if (auth_ != nullptr) {  // the batch's seal stands in for its CRC
      std::memcpy(dst + used + kHeadBytes, r.data + 8 + s.pub.offset, piece);
    } else {
      crc = crc32c(crc, dst + used, kHeadBytes);
      crc = crc32c_copy(crc, dst + used + kHeadBytes, r.data + 8 + s.pub.offset, piece);
    }
    used += kHeadBytes + piece;
    ++records;
    shared_.root_copy_bytes.add(piece);
    if (piece < remaining) {
      s.pub.offset += piece;
      break;  // the frame is full
    }
    s.pub.offset = 0;
    s.pub.ring.pop();
    ++s.pub.next_msg;
    s.pub.bytes_done += msg_len;
    counters_.stream_msgs_published.add();
    r = s.pub.ring.peek();
  }
  rte_pktmbuf_trim(m, static_cast<uint16_t>(cfg_.segment_bytes - used));
  const uint64_t batch = s.pub.next_batch++;
  BatchSlot& b = s.slot_of(batch);
  b.msgs_after = s.pub.next_msg;  // messages numbered below it are complete
  b.bytes_after = s.pub.bytes_done;
  counters_.stream_batches_formed.add();
  // With a key the publisher seals the batch once; every forwarder carries the seal.
  const wire::Seal seal = auth_ != nullptr ? auth_->seal_payload(dst, used) : wire::Seal{};
  hold_batch(s, batch, m, used, crc, seal, records, first_msg, now);
  return true;
}

// Each turn: adopt new publishers, cut what they published into batches,
// deliver what waits for the application, and send the reports due.
void Streams::pump_streams(uint64_t now) {
  if (publishers_.waiting()) take_publishers(now);
  streams_busy_ = false;
  stream_due_ns_ = UINT64_MAX;
  if (streams_failed_) {
    tell_parents(now);
    return;
  }
  const uint64_t delay = static_cast<uint64_t>(cfg_.streams.report_us * 1000);
  for (const uint16_t slot : table_.open_slots()) {
    StreamState& s = *table_.at(slot);
    if (s.pub.shared != nullptr) {
      if (stream_multicast_) {
        // Each batch goes to the group address before the next is cut
        // (multicast_may_form). A turn cuts one batch of what waits - what
        // comes meanwhile fills the next - unless more than a frame's worth
        // waits: then it cuts and sends full batches one after another, up
        // to kMulticastBatchesPerTurn. One batch a turn (19 64-byte
        // messages) barely outran a 1M msgs/s stream on a polling core that
        // also delivers to 7 members, and a 0.4 ms hiccup left a backlog
        // that took milliseconds to clear.
        multicast_batches(s, now);
        for (uint32_t n = 0; n < kMulticastBatchesPerTurn && form_batch(s, now); ++n) {
          multicast_batches(s, now);
          if (s.pub.ring.bytes_waiting() < cfg_.segment_bytes) break;
        }
        repair_batches(s, now);
      } else {
        while (form_batch(s, now)) {
        }
      }
    }
    if (s.deliver.next < s.received_end) {
      deliver_stream(s, now);
      const uint64_t evict_ns = static_cast<uint64_t>(cfg_.streams.evict_after_ms * 1e6);
      if (evict_ns > 0 && !s.evicted && s.deliver.full_since_ns != 0 && now > s.deliver.full_since_ns + evict_ns) evict_self(s, now);
      update_marks(s, now);
      // Still behind: a full ring the application is draining, or a gap.
      if (s.deliver.next < s.received_end) stream_due_ns_ = std::min(stream_due_ns_, now + delay);
      watch_gap(s, now);
      if (streams_failed_) return;
    }
    if (s.evicted && s.evict_notice_next < cfg_.nodes) {
      tell_eviction(s, now);
      stream_due_ns_ = std::min(stream_due_ns_, now + delay);
    }
    if (s.pub.shared == nullptr) {
      // Over multicast what it holds is news too (the publisher repairs what
      // it does not), but every member reports to the publisher, not a
      // parent each: progress waits five report intervals, a gap one.
      const bool news = s.books.mark > s.books.reported || (cfg_.streams.multicast && s.held_end > s.books.reported_held);
      const uint64_t news_delay =
          cfg_.streams.multicast && std::max(s.held_end, s.deliver.next) >= s.received_end ? 5 * delay : delay;
      const bool quiet_since = now >= s.books.last_report_ns + (news ? news_delay : kRefreshNs);
      const bool refresh = s.books.mark > 0 && now < s.last_activity_ns + kRefreshForNs;
      if ((news || refresh) && quiet_since) send_report(s, now);
      if (news || refresh)
        stream_due_ns_ = std::min(stream_due_ns_, s.books.last_report_ns + (news ? news_delay : kRefreshNs));
    }
    const bool pending = (s.pub.shared != nullptr && (!s.pub.ring.empty() || s.mcast.next < s.pub.next_batch)) ||
                         s.deliver.next < s.received_end ||
                         s.books.mark < s.received_end;
    streams_busy_ = streams_busy_ || pending;
  }
}

// A member whose streams failed tells each stream's parent (a report
// flagged abandoned), whose streams then fail too, naming this member, and
// tell theirs, up to the publisher: a parent whose batches were all
// acknowledged has nothing in flight to time out on, and would wait for
// this member's reports for ever - its publisher's last messages never
// stable, and nobody told. Datagrams, so repeated every kRefreshNs for
// kRefreshForNs from the first telling, as reports are - from the first
// telling, not the failure: a core that did not run for kRefreshForNs after
// its streams failed (the stream fuzzer stalled one 97 ms) told nobody, and
// the publisher waited on this member unaware.
void Streams::tell_parents(uint64_t now) {
  if (streams_first_told_ns_ != kNeverTold && now >= streams_first_told_ns_ + kRefreshForNs) return;
  if (now >= streams_told_ns_ + kRefreshNs) {
    bool all = true;
    for (const uint16_t slot : table_.open_slots()) {
      StreamState& s = *table_.at(slot);
      if (s.tree.parent() != algos::kNoRank && !send_report(s, now, wire::kFlagAbandoned)) all = false;
    }
    if (!all) {  // no room on the lane: the next turn tries again
      stream_due_ns_ = now;
      return;
    }
    if (streams_first_told_ns_ == kNeverTold) streams_first_told_ns_ = now;
    streams_told_ns_ = now;
  }
  stream_due_ns_ = std::min(stream_due_ns_, streams_told_ns_ + kRefreshNs);
}

// ---------------------------------------------------------------- failure

// A peer went silent while batches were in flight to it (or the group broke):
// every stream of this member stops. Publishers see the error; what is owed
// is dropped and what is in flight abandoned, so the channels stay in step.
// In a group of processes a member whose streams stopped is lost to the
// group for this epoch: the node tells every member (failure notices)
// instead of each finding out at its own timeout.
void Streams::fail(uint64_t now, OpError err, Rank peer) {
  if (streams_failed_) return;
  streams_failed_ = true;
  streams_first_told_ns_ = kNeverTold;
  streams_told_ns_ = 0;  // the parents are told at the next turn (tell_parents)...
  stream_due_ns_ = now;  // ...which must come now, not at the core's next timer
  stream_error_peer_.store(peer, std::memory_order_relaxed);
  stream_error_.store(static_cast<uint8_t>(err), std::memory_order_release);
  publishers_.fail_all(static_cast<uint8_t>(err), peer);
  stream_owed_ = 0;
  // The node drops what its channels owe and abandons what is in flight
  // (streams' batches too, so the channels stay in step), and fails the
  // broadcast that runs beside them.
  host_.streams_failed(now, err, peer);
}

}  // namespace lanecast::engine::stream
