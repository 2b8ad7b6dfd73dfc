// Node: streams (docs/streams.md). A publisher's messages wait in a ring its
// application fills (stream_state.h); at each turn the core cuts whatever is
// there into batches - as many messages per frame as fit, pieces of larger
// ones, nothing held back to wait for more - keeps each batch in a slot of
// the stream's window, delivers it here and owes it to its children in the
// stream's tree (algos/topology/stream_tree.h). A member that receives a
// batch from its parent keeps it the same way, forwards the same buffer to
// its own children (zero-copy) and delivers in batch order. Batches travel on
// the reliable channels the broadcasts use, beside them.
//
// Progress flows back up the tree: each member reports to its parent the
// batch below which its whole subtree delivered (a datagram; reports are
// cumulative, so a lost one is made good by the next, and a member repeats
// its last one every millisecond while the stream is busy). A batch is let go
// once the subtree below a member delivered it; the publisher's "stable"
// point is the whole group's, and its application may publish only a window
// ahead of it.
#include <rte_mbuf.h>

#include <algorithm>

#include "engine/auth/frame_auth.h"
#include "engine/checksum/crc32c.h"
#include "engine/node/node.h"

namespace lanecast::engine {

using algos::Rank;
using stream::BatchSlot;
using stream::RecordHead;
using stream::StreamState;

namespace {

constexpr uint64_t kRefreshNs = 1'000'000;        // repeat a report this often while busy
constexpr uint64_t kRefreshForNs = 50'000'000;    // ... for this long after the stream's last batch
constexpr uint32_t kHeadBytes = sizeof(RecordHead);

// Whether a batch's records are well formed: each head and piece within the
// payload, `records` of them, and the pieces of a large message where the
// publisher puts them (form_batch): a piece that says more follow ends its
// batch, a continuation starts one, and neither is empty. The bytes were
// checked against the CRC first.
bool records_valid(const uint8_t* p, uint32_t len, uint32_t records) {
  uint32_t off = 0, n = 0;
  while (off < len) {
    if (len - off < kHeadBytes) return false;
    const RecordHead h = stream::read_head(p + off);
    const uint32_t piece = h.piece & stream::kPieceMask;
    const bool more = (h.piece & stream::kMorePieces) != 0;
    const bool continuation = (h.piece & stream::kContinuation) != 0;
    if (piece > len - off - kHeadBytes || piece > h.message_len) return false;
    if (!more && !continuation && piece != h.message_len) return false;
    if ((more || continuation) && piece == 0) return false;
    if (more && (piece == h.message_len || off + kHeadBytes + piece != len)) return false;
    if (continuation && off != 0) return false;
    off += kHeadBytes + piece;
    ++n;
  }
  return n == records && n > 0;
}

}  // namespace

// The largest message a stream carries: what the group allows, what half
// the publisher's ring and half a delivery ring hold, what the window of
// batches holds at once, and never more than kMaxStreamMessage, so a
// record's 32-bit length (the rings' and the wire's) holds it with its heads
// (docs/streams.md).
//
// The window's bound: a message is delivered only once every piece is
// here, and its first batch is let go only after that, so all its batches
// must fit the window together - the first piece may be one byte at the end
// of a batch, every other batch carries a full piece. A larger message
// would leave the publisher waiting for a window that never opens.
uint64_t Node::max_stream_message() const {
  const lanecast::StreamOptions& o = cfg_.streams;
  const uint64_t ring = o.window_bytes / 2 > 64 ? o.window_bytes / 2 - 64 : 0;
  const uint64_t delivery = o.delivery_bytes / 2 > 64 ? o.delivery_bytes / 2 - 64 : 0;
  const uint64_t piece = cfg_.segment_bytes > kHeadBytes ? cfg_.segment_bytes - kHeadBytes : 0;
  const uint64_t window = uint64_t{o.window_batches - 2} * piece;
  return std::min({cfg_.max_message_bytes, ring, delivery, window, kMaxStreamMessage});
}

bool Node::open_publisher(std::unique_ptr<stream::PublisherShared> p) {
  if (!publisher_queue_.push(p.get())) return false;
  p.release();  // the queue's pointer owns it now; the core adopts it
  notify_core();
  return true;
}

void Node::set_message_handler(MessageHandler h) {
  handler_ = std::move(h);
  has_handler_.store(static_cast<bool>(handler_), std::memory_order_release);
}

void Node::take_publishers(uint64_t now) {
  stream::PublisherShared* raw;
  while (publisher_queue_.pop(raw)) {
    publishers_.emplace_back(raw);  // set-up of a stream, not per message
    if (streams_failed_) {  // opened after this member's streams failed: told now, as the others were
      raw->error_peer.store(stream_error_peer_.load(std::memory_order_relaxed), std::memory_order_relaxed);
      raw->error.store(stream_error_.load(std::memory_order_relaxed), std::memory_order_release);
      continue;
    }
    const std::optional<uint16_t> slot = stream_slot(cfg_.rank, raw->index);
    StreamState* s = slot ? open_stream_state(*slot, cfg_.rank, raw->index, now) : nullptr;
    if (s == nullptr) {  // an index Member::open_stream refuses: the publisher's error
      raw->error.store(static_cast<uint8_t>(OpError::Internal), std::memory_order_release);
      continue;
    }
    s->pub = raw;
    s->pub_ring = stream::RecordRing(raw->ring);
  }
}

std::optional<uint16_t> Node::stream_slot(Rank publisher, uint32_t index) const {
  const uint32_t per = cfg_.streams.streams_per_member;
  if (publisher >= cfg_.nodes || index >= per) return std::nullopt;
  return static_cast<uint16_t>(publisher * per + index);
}

StreamState* Node::find_stream(Rank publisher, uint32_t index) {
  const std::optional<uint16_t> slot = stream_slot(publisher, index);
  return slot ? stream_slots_[*slot].get() : nullptr;
}

// A stream this member starts taking part in: its window of slots, its
// place in the tree, its share of the owed runs and (the first time) the
// delivery ring. Done once per stream, on its first frame: the only
// allocations streams make.
StreamState* Node::open_stream_state(uint16_t slot, Rank publisher, uint16_t index, uint64_t now) {
  if (StreamState* s = stream_slots_[slot].get()) return s;
  auto state = std::make_unique<StreamState>();
  StreamState& s = *state;
  s.slot = slot;
  s.publisher = publisher;
  s.index = index;
  s.tree = algos::StreamTree(cfg_.nodes, publisher, cfg_.rank, cfg_.streams.fanout);
  s.slots.assign(cfg_.streams.window_batches, BatchSlot{});
  s.mask = cfg_.streams.window_batches - 1;
  s.child_mark.assign(s.tree.children(), 0);
  s.child_slowest.assign(s.tree.children(), algos::kNoRank);
  for (uint32_t i = 0; i < s.tree.children(); ++i) s.child_slowest[i] = s.tree.child(i);
  s.subtree_slowest = cfg_.rank;
  s.mirror.publisher.store(publisher, std::memory_order_relaxed);
  s.mirror.index.store(index, std::memory_order_relaxed);
  s.last_report_ns = s.last_activity_ns = now;
  // The batches owed to one child merge into runs unless other sends come
  // between them: at worst a run per batch of the window, per child.
  runs_.grow(cfg_.streams.window_batches * s.tree.children());
  if (delivery_hdr_.load(std::memory_order_relaxed) == nullptr && !has_handler_.load(std::memory_order_acquire)) {
    const size_t bytes = stream::RecordRing::bytes_for(cfg_.streams.delivery_bytes);
    delivery_mem_ = stream::aligned_bytes(bytes);
    std::memset(delivery_mem_.get(), 0, bytes);  // no page faults on the delivery path later
    stream::RecordRingHeader* h = stream::RecordRing::init(delivery_mem_.get(), cfg_.streams.delivery_bytes);
    delivery_ = stream::RecordRing(h);
    delivery_hdr_.store(h, std::memory_order_release);
  }
  if (has_handler_.load(std::memory_order_acquire) && reassembly_.empty()) reassembly_.resize(max_stream_message());
  stream_slots_[slot] = std::move(state);
  streams_open_.push_back(slot);
  stream_mirrors_[slot].store(&s.mirror, std::memory_order_release);
  return &s;
}

// ---------------------------------------------------------------- publisher

// Cuts the messages waiting in the publisher's ring into one batch (all of
// them if they fit, else as much as fits, a large message in pieces). False
// when there is nothing to send or no slot free in the window.
bool Node::form_batch(StreamState& s, uint64_t now) {
  if (s.next_batch - s.released >= s.slots.size()) return false;  // the window is full: wait for reports
  stream::RecordView r = s.pub_ring.peek();
  if (r.data == nullptr) {
    if (s.pub_ring.corrupt()) fail_streams(now, OpError::Internal, cfg_.rank);
    return false;
  }
  rte_mbuf* m = rte_pktmbuf_alloc(pools_.payload);
  uint8_t* dst = m == nullptr ? nullptr : reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, static_cast<uint16_t>(cfg_.segment_bytes)));
  if (dst == nullptr) {
    if (m != nullptr) rte_pktmbuf_free(m);
    counters_.tx_alloc_failures.add();
    return false;
  }
  const uint64_t first_msg = s.next_msg;
  uint32_t used = 0, records = 0, crc = 0;
  while (r.data != nullptr) {
    if (r.len < 8) {  // the application side writes a timestamp first, always
      fail_streams(now, OpError::Internal, cfg_.rank);
      rte_pktmbuf_free(m);
      return false;
    }
    uint64_t ts;
    std::memcpy(&ts, r.data, 8);
    const uint32_t msg_len = r.len - 8;
    const uint32_t remaining = msg_len - s.pub_offset;
    if (cfg_.segment_bytes - used < kHeadBytes + (remaining > 0 ? 1 : 0)) break;
    const uint32_t piece = std::min(remaining, cfg_.segment_bytes - used - kHeadBytes);
    RecordHead h;
    h.piece = piece | (s.pub_offset > 0 ? stream::kContinuation : 0) | (piece < remaining ? stream::kMorePieces : 0);
    h.message_len = msg_len;
    h.timestamp_ns = ts;
    stream::write_head(dst + used, h);
    if (auth_ != nullptr) {  // the batch's seal stands in for its CRC
      std::memcpy(dst + used + kHeadBytes, r.data + 8 + s.pub_offset, piece);
    } else {
      crc = crc32c(crc, dst + used, kHeadBytes);
      crc = crc32c_copy(crc, dst + used + kHeadBytes, r.data + 8 + s.pub_offset, piece);
    }
    used += kHeadBytes + piece;
    ++records;
    counters_.root_copy_bytes.add(piece);
    if (piece < remaining) {
      s.pub_offset += piece;
      break;  // the frame is full
    }
    s.pub_offset = 0;
    s.pub_ring.pop();
    ++s.next_msg;
    s.bytes_done += msg_len;
    counters_.stream_msgs_published.add();
    r = s.pub_ring.peek();
  }
  rte_pktmbuf_trim(m, static_cast<uint16_t>(cfg_.segment_bytes - used));
  const uint64_t batch = s.next_batch++;
  BatchSlot& b = s.slot_of(batch);
  b.msgs_after = s.next_msg;  // messages numbered below it are complete
  b.bytes_after = s.bytes_done;
  counters_.stream_batches_formed.add();
  // With a key the publisher seals the batch once; every forwarder carries the seal.
  const wire::Seal seal = auth_ != nullptr ? auth_->seal_payload(dst, used) : wire::Seal{};
  hold_batch(s, batch, m, used, crc, seal, records, first_msg, now);
  return true;
}

// ---------------------------------------------------------------- every member

// Keeps a batch in its slot and owes it to each child (the same buffer,
// shared by reference when sent).
void Node::hold_batch(StreamState& s, uint64_t batch, rte_mbuf* payload, uint32_t len, uint32_t crc,
                      const wire::Seal& seal, uint32_t records, uint64_t first_msg, uint64_t now) {
  BatchSlot& b = s.slot_of(batch);
  const uint64_t msgs_after = b.msgs_after, bytes_after = b.bytes_after;
  b = BatchSlot{payload, batch, len, crc, records, first_msg, msgs_after, bytes_after, seal};
  s.received_end = std::max(s.received_end, batch + 1);
  s.last_activity_ns = now;
  for (uint32_t i = 0; i < s.tree.children(); ++i) {
    Channel& c = channel(s.tree.child(i), 0);
    const bool pushed = c.owed.push(runs_, static_cast<uint32_t>(batch), next_stamp_++, s.slot);
    owed_one(c, pushed);
    if (pushed) ++stream_owed_;
  }
}

// Delivers what is in order: every message of every batch held from
// deliver_next on, a message in pieces once all its pieces are here. Stops
// at a gap, or when the delivery ring is full (the rest waits for the
// application: since when it waits with nothing taken is noted for the
// slow-member policy). A member that left the stream for being slow
// delivers nothing more: the batches that arrived in order only move it on.
void Node::deliver_stream(StreamState& s, uint64_t now) {
  s.missing = StreamState::kNoBatch;
  bool took = false;
  while (s.deliver_next < s.received_end) {
    BatchSlot& b = s.slot_of(s.deliver_next);
    if (b.payload == nullptr || b.batch != s.deliver_next) {  // a gap: wait for it
      s.missing = s.deliver_next;
      break;
    }
    const uint8_t* base = rte_pktmbuf_mtod(b.payload, const uint8_t*);
    if (s.evicted || s.deliver_offset >= b.len) {
      if (s.evicted) counters_.stream_batches_skipped.add();
      ++s.deliver_next;
      s.deliver_offset = 0;
      continue;
    }
    uint32_t used = 0;
    const uint64_t seq = s.deliver_seq;
    const bool went = deliver_message(s, base + s.deliver_offset, &used);
    took = took || s.deliver_seq != seq;
    if (!went) {
      if (used != 0) s.full_since_ns = 0;                            // a piece is missing
      else if (took || s.full_since_ns == 0) s.full_since_ns = now;  // the ring is full
      return;
    }
    s.deliver_offset += used;
  }
  s.full_since_ns = 0;
}

// One message from the record at `rec`: handed to the handler or written to
// the delivery ring. *used: the bytes of this batch it took. A message in
// pieces moves the cursor into the batch of its last piece itself. False:
// it cannot go yet (*used 0: the ring is full; *used 1: a piece is missing).
// The record's bounds were checked on arrival (records_valid).
bool Node::deliver_message(StreamState& s, const uint8_t* rec, uint32_t* used) {
  const RecordHead h = stream::read_head(rec);
  const uint32_t piece = h.piece & stream::kPieceMask;
  const bool handler = has_handler_.load(std::memory_order_relaxed);
  stream::DeliveredHead dh{s.deliver_seq, h.timestamp_ns, s.publisher, s.index, 0};
  if (h.piece & stream::kContinuation) {
    // A piece whose first piece was never seen here: only a publisher that
    // breaks the format sends this. Counted and skipped.
    counters_.rx_stream_bad.add();
    *used = kHeadBytes + piece;
    return true;
  }
  if (!(h.piece & stream::kMorePieces)) {
    if (handler) {
      handler_(dh, rec + kHeadBytes, piece);
    } else {
      uint8_t* dst = delivery_.reserve(sizeof dh + piece, 0);
      if (dst == nullptr) {
        counters_.stream_delivery_full.add();
        *used = 0;
        return false;
      }
      std::memcpy(dst, &dh, sizeof dh);
      std::memcpy(dst + sizeof dh, rec + kHeadBytes, piece);
      delivery_.commit();
      counters_.delivered_bytes.add(piece);
    }
    *used = kHeadBytes + piece;
    ++s.deliver_seq;
    counters_.stream_msgs_delivered.add();
    note_delivered(s, piece);
    return true;
  }
  // A message in pieces: every later piece starts a following batch.
  if (h.message_len > max_stream_message()) {
    counters_.rx_stream_bad.add();
    *used = kHeadBytes + piece;
    return true;
  }
  uint64_t have = piece, last = s.deliver_next;
  uint32_t last_piece = 0;
  while (have < h.message_len) {
    ++last;
    const BatchSlot& b = s.slot_of(last);
    if (last >= s.received_end || b.payload == nullptr || b.batch != last) {
      s.missing = last;
      *used = 1;
      return false;
    }
    const RecordHead c = stream::read_head(rte_pktmbuf_mtod(b.payload, const uint8_t*));
    last_piece = c.piece & stream::kPieceMask;
    // Every piece after the first continues this message, and the pieces add
    // up to its length exactly: the last says so, the others say more
    // follow. Anything else (a publisher that breaks the format) would copy
    // past the buffer reserved for message_len bytes; the message is refused.
    const bool more = (c.piece & stream::kMorePieces) != 0;
    if (!(c.piece & stream::kContinuation) || c.message_len != h.message_len || last_piece > h.message_len - have ||
        more != (have + last_piece < h.message_len)) {
      counters_.rx_stream_bad.add();
      *used = kHeadBytes + piece;
      return true;
    }
    have += last_piece;
  }
  uint8_t* dst;
  if (handler) {
    dst = reassembly_.data();
  } else {
    dst = delivery_.reserve(sizeof dh + uint64_t{h.message_len}, 0);
    if (dst == nullptr) {
      counters_.stream_delivery_full.add();
      *used = 0;
      return false;
    }
    std::memcpy(dst, &dh, sizeof dh);
    dst += sizeof dh;
  }
  std::memcpy(dst, rec + kHeadBytes, piece);
  uint64_t at = piece;
  for (uint64_t b = s.deliver_next + 1; b <= last; ++b) {
    const uint8_t* p = rte_pktmbuf_mtod(s.slot_of(b).payload, const uint8_t*);
    const uint32_t n = stream::read_head(p).piece & stream::kPieceMask;
    std::memcpy(dst + at, p + kHeadBytes, n);
    at += n;
  }
  if (handler) {
    handler_(dh, dst, h.message_len);
  } else {
    delivery_.commit();
    counters_.delivered_bytes.add(h.message_len);
  }
  ++s.deliver_seq;
  counters_.stream_msgs_delivered.add();
  note_delivered(s, h.message_len);
  // The cursor moves past the last piece, in its batch.
  s.deliver_next = last;
  s.deliver_offset = kHeadBytes + last_piece;
  *used = 0;
  return true;
}

void Node::note_delivered(StreamState& s, uint64_t bytes) {
  stream::StreamMirror& m = s.mirror;
  m.delivered_msgs.store(m.delivered_msgs.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  m.delivered_bytes.store(m.delivered_bytes.load(std::memory_order_relaxed) + bytes, std::memory_order_relaxed);
}

// The subtree's mark: batches below it are delivered here and in every
// child's subtree. Slots below it are let go; the publisher's mark is the
// group's stable point.
void Node::update_marks(StreamState& s, uint64_t now) {
  uint64_t mark = s.deliver_next;
  uint32_t slowest = cfg_.rank;
  for (size_t i = 0; i < s.child_mark.size(); ++i)
    if (s.child_mark[i] < mark) {
      mark = s.child_mark[i];
      slowest = s.child_slowest[i];
    }
  stream::StreamMirror& mirror = s.mirror;
  mirror.batches_held.store(s.received_end - s.released, std::memory_order_relaxed);
  mirror.slowest.store(slowest, std::memory_order_relaxed);
  mirror.slowest_lag.store(s.received_end - mark, std::memory_order_relaxed);
  s.subtree_slowest = slowest;
  if (mark <= s.subtree_mark) return;
  s.subtree_mark = mark;
  release_batches(s, mark);
  if (s.pub != nullptr) return;
  // Report at once when a good part of the window moved; otherwise soon.
  if (mark - s.reported >= std::max<uint64_t>(1, s.slots.size() / 8)) send_report(s, now);
}

void Node::release_batches(StreamState& s, uint64_t below) {
  for (; s.released < below; ++s.released) {
    BatchSlot& b = s.slot_of(s.released);
    if (b.payload == nullptr || b.batch != s.released) continue;
    if (s.pub != nullptr) {
      s.pub->stable_bytes.store(b.bytes_after, std::memory_order_relaxed);
      s.pub->stable_msgs.store(b.msgs_after, std::memory_order_release);
    }
    rte_pktmbuf_free(b.payload);
    b.payload = nullptr;
  }
}

// A report to the parent: a datagram (never acknowledged: the next one
// carries everything this one did). `flags` kFlagAbandoned: this member's
// streams failed (tell_parents).
bool Node::send_report(StreamState& s, uint64_t now, uint16_t flags) {
  if (!report_to(s.tree.parent(), s.publisher, s.index, s.subtree_mark, s.subtree_slowest, flags, now)) return false;
  s.reported = s.subtree_mark;
  s.last_report_ns = now;
  return true;
}

// `mark`: every batch below it delivered in this member's subtree;
// `slowest`: who holds the mark back, for the publisher's counters.
bool Node::report_to(Rank parent, Rank publisher, uint16_t index, uint64_t mark, uint32_t slowest, uint16_t flags,
                     uint64_t now) {
  if (parent == algos::kNoRank || !room(0, link_bytes_ + hdr_data_, now)) return false;
  uint8_t* at;
  rte_mbuf* h = alloc_frame(addrs_[parent], hdr_data_, &at);
  if (h == nullptr) return false;
  wire::DataBody b{};
  b.op = index;
  b.root = publisher;
  b.offset = mark;
  b.segment = slowest;
  b.segment_bytes = cfg_.segment_bytes;
  wire::write_data(at, origin(), b, static_cast<uint16_t>(flags | wire::kFlagStream | wire::kFlagSignal | seal_flag_),
                   wire::FrameType::Datagram);
  put_payload_seal(at, wire::Seal{});
  tx_push(0, h);
  counters_.stream_reports_tx.add();
  return true;
}

// Each turn: adopt new publishers, cut what they published into batches,
// deliver what waits for the application, and send the reports due.
void Node::pump_streams(uint64_t now) {
  if (publisher_queue_.read_available() > 0) take_publishers(now);
  streams_busy_ = false;
  stream_due_ns_ = UINT64_MAX;
  if (streams_failed_) {
    tell_parents(now);
    return;
  }
  const uint64_t delay = static_cast<uint64_t>(cfg_.streams.report_us * 1000);
  for (const uint16_t slot : streams_open_) {
    StreamState& s = *stream_slots_[slot];
    if (s.pub != nullptr)
      while (form_batch(s, now)) {
      }
    if (s.deliver_next < s.received_end) {
      deliver_stream(s, now);
      const uint64_t evict_ns = static_cast<uint64_t>(cfg_.streams.evict_after_ms * 1e6);
      if (evict_ns > 0 && !s.evicted && s.full_since_ns != 0 && now > s.full_since_ns + evict_ns) evict_self(s, now);
      update_marks(s, now);
      // Still behind: a full ring the application is draining, or a gap.
      if (s.deliver_next < s.received_end) stream_due_ns_ = std::min(stream_due_ns_, now + delay);
      watch_gap(s, now);
      if (streams_failed_) return;
    }
    if (s.evicted && s.evict_notice_next < cfg_.nodes) {
      tell_eviction(s, now);
      stream_due_ns_ = std::min(stream_due_ns_, now + delay);
    }
    if (s.pub == nullptr) {
      const bool news = s.subtree_mark > s.reported;
      const bool quiet_since = now >= s.last_report_ns + (news ? delay : kRefreshNs);
      const bool refresh = s.subtree_mark > 0 && now < s.last_activity_ns + kRefreshForNs;
      if ((news || refresh) && quiet_since) send_report(s, now);
      if (news || refresh) stream_due_ns_ = std::min(stream_due_ns_, s.last_report_ns + (news ? delay : kRefreshNs));
    }
    const bool pending = (s.pub != nullptr && !s.pub_ring.empty()) || s.deliver_next < s.received_end ||
                         s.subtree_mark < s.received_end;
    streams_busy_ = streams_busy_ || pending;
  }
}

// A member whose streams failed tells each stream's parent (a report
// flagged abandoned), whose streams then fail too, naming this member, and
// tell theirs, up to the publisher: a parent whose batches were all
// acknowledged has nothing in flight to time out on, and would wait for
// this member's reports for ever - its publisher's last messages never
// stable, and nobody told. Datagrams, so repeated every kRefreshNs for
// kRefreshForNs, as reports are.
void Node::tell_parents(uint64_t now) {
  if (now >= streams_failed_ns_ + kRefreshForNs) return;
  if (now >= streams_told_ns_ + kRefreshNs) {
    bool all = true;
    for (const uint16_t slot : streams_open_) {
      StreamState& s = *stream_slots_[slot];
      if (s.tree.parent() != algos::kNoRank && !send_report(s, now, wire::kFlagAbandoned)) all = false;
    }
    if (!all) {  // no room on the lane: the next turn tries again
      stream_due_ns_ = now;
      return;
    }
    streams_told_ns_ = now;
  }
  stream_due_ns_ = std::min(stream_due_ns_, streams_told_ns_ + kRefreshNs);
}

// ---------------------------------------------------------------- receive

void Node::handle_stream_batch(rte_mbuf* m, const wire::Parsed& p, Channel& c, uint64_t now) {
  const wire::DataBody& d = p.data;
  // Every refusal is counted under its reason, and the frame given back.
  // Nothing is kept for a stream - not even its slot - before its frame
  // came from the stream's parent and holds well-formed records.
  auto drop = [&] { rte_pktmbuf_free(m); };
  const std::optional<uint16_t> slot = stream_slot(d.root, d.op);
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
  if (d.total_len > UINT32_MAX || !records_valid(bytes, d.payload_len, static_cast<uint32_t>(d.total_len))) {
    counters_.rx_stream_bad.add();
    return drop();
  }
  StreamState* s = open_stream_state(*slot, d.root, static_cast<uint16_t>(d.op), now);
  const auto rel = static_cast<int32_t>(d.segment - static_cast<uint32_t>(s->deliver_next));
  const uint64_t batch = s->deliver_next + static_cast<uint64_t>(static_cast<int64_t>(rel));
  if (rel < 0 || batch < s->released || (s->slot_of(batch).payload != nullptr && s->slot_of(batch).batch == batch)) {
    c.rx.accept(d.seq);  // had it: take it off the sender's hands
    ack_now(c);
    counters_.rx_stream_duplicate.add();
    return drop();
  }
  if (batch >= s->released + s->slots.size()) {  // not acknowledged: the sender tries again
    counters_.rx_stream_ahead.add();
    return drop();
  }
  note_ack(c, p.flags, c.rx.accept(d.seq), now);
  counters_.stream_batches_rx.add();
  hold_batch(*s, batch, detach_payload(m, p.payload_offset), d.payload_len, d.payload_crc, p.payload_seal,
             static_cast<uint32_t>(d.total_len), d.offset, now);
  deliver_stream(*s, now);
  update_marks(*s, now);
}

void Node::handle_stream_report(const wire::Parsed& p, uint64_t now) {
  const wire::DataBody& d = p.data;
  StreamState* s = find_stream(d.root, d.op);
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
  if (d.offset > s->received_end) {
    counters_.rx_stream_bad.add();
    return;
  }
  counters_.stream_reports_rx.add();
  if (d.segment < cfg_.nodes) s->child_slowest[i] = d.segment;
  if (d.offset > s->child_mark[i]) s->child_mark[i] = d.offset;
  update_marks(*s, now);
}

// A batch its parent gave up (sent again empty: abandoned): the parent's
// streams failed, or it let the batch go because the reports said this
// member's subtree delivered it. A batch this member lacks will then never
// come from anywhere: its streams fail now, naming the parent, instead of
// waiting at the gap for ever (the publisher in WouldBlock above it).
void Node::stream_given_up(const wire::Parsed& p, uint64_t now) {
  const wire::DataBody& d = p.data;
  const std::optional<uint16_t> slot = stream_slot(d.root, d.op);
  if (!slot || d.root == cfg_.rank ||
      p.src != algos::StreamTree(cfg_.nodes, d.root, cfg_.rank, cfg_.streams.fanout).parent()) {
    counters_.rx_stream_bad.add();
    return;
  }
  if (streams_failed_) return tell_failed(p, now);
  if (const StreamState* s = stream_slots_[*slot].get()) {
    const uint64_t batch = s->unwrap(d.segment);
    const BatchSlot& b = s->slots[batch & s->mask];
    if (batch < s->deliver_next || (b.payload != nullptr && b.batch == batch)) return;  // it has it
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
    if (!room(0, link_bytes_ + hdr_data_, now)) return;
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
    tx_push(0, h);
  }
}

void Node::handle_stream_eviction(const wire::Parsed& p) {
  const wire::DataBody& d = p.data;
  StreamState* s = find_stream(d.root, d.op);
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
  const StreamState& s = *stream_slots_[slot];
  const BatchSlot& b = s.slots[batch_low & s.mask];
  return b.payload != nullptr && static_cast<uint32_t>(b.batch) == batch_low;
}

rte_mbuf* Node::build_stream(const Channel& c, uint16_t slot, uint32_t batch_low, uint32_t seq, uint16_t flags) {
  if (!stream_holds(slot, batch_low)) return nullptr;
  const StreamState& s = *stream_slots_[slot];
  const BatchSlot& b = s.slots[batch_low & s.mask];
  uint8_t* at;
  rte_mbuf* h = alloc_frame(addrs_[c.peer], hdr_data_, &at);
  if (h == nullptr) return nullptr;
  wire::DataBody body{};
  body.op = s.index;
  body.root = s.publisher;
  body.seq = seq;
  body.segment = batch_low;
  body.offset = b.first_msg;
  body.total_len = b.records;
  body.payload_len = b.len;
  body.payload_crc = b.crc;
  body.segment_bytes = cfg_.segment_bytes;
  body.lane = static_cast<uint8_t>(c.lane);
  wire::write_data(at, origin(), body, static_cast<uint16_t>(flags | wire::kFlagStream | seal_flag_));
  put_payload_seal(at, b.seal);
  return attach_payload(h, b.payload);
}

// ---------------------------------------------------------------- failure

// A peer went silent while batches were in flight to it (or the group broke):
// every stream of this member stops. Publishers see the error; what is owed
// is dropped and what is in flight abandoned, so the channels stay in step.
void Node::fail_streams(uint64_t now, OpError err, Rank peer) {
  if (streams_failed_) return;
  streams_failed_ = true;
  streams_failed_ns_ = now;
  streams_told_ns_ = 0;  // the parents are told at the next turn (tell_parents)
  // In a group of processes a member whose streams stopped is lost to the
  // group for this epoch: every member hears it (failure notices) instead
  // of finding out at its own timeout.
  if (cfg_.fail_stop && !broken_.yes && err != OpError::GroupBroken)
    mark_broken(op_.active ? op_.sub.op : next_op_, err, peer, cfg_.rank);
  stream_error_peer_.store(peer, std::memory_order_relaxed);
  stream_error_.store(static_cast<uint8_t>(err), std::memory_order_release);
  for (auto& p : publishers_) {
    p->error_peer.store(peer, std::memory_order_relaxed);
    p->error.store(static_cast<uint8_t>(err), std::memory_order_release);
  }
  for (Channel& c : channels_) {
    const uint32_t before = c.owed.size();
    c.owed.clear(runs_);
    owed_total_ -= before;
    if (!c.tx.idle() && c.tx.slab() != nullptr) {
      c.tx.abandon_in_flight(now, /*streams_too=*/true);
      if (c.tx.has_resend() && !c.in_resend) {
        c.in_resend = true;
        resend_.push_back(channel_id(c));
      }
    }
  }
  stream_owed_ = 0;
  if (op_.active) finish(now, err, peer);
  for (auto* list : {&ready_, &waiting_}) {
    for (const Owing& o : *list) channels_[o.channel].listed = false;
    list->clear();
  }
}

void Node::free_streams() {
  for (const uint16_t slot : streams_open_)
    for (BatchSlot& b : stream_slots_[slot]->slots)
      if (b.payload != nullptr) {
        rte_pktmbuf_free(b.payload);
        b.payload = nullptr;
      }
  stream::PublisherShared* raw;
  while (publisher_queue_.pop(raw)) delete raw;
}

}  // namespace lanecast::engine
