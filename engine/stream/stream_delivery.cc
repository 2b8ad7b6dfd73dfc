// Receiving (receiving.h): a stream's batches at every member (streams.cc has the whole
// picture) - held in the window's slots and owed to the children, delivered
// in order to the application (its handler or its ring; messages in pieces
// put together), and let go once the subtree below delivered them.
#include <rte_mbuf.h>

#include <algorithm>
#include <cstring>

#include "engine/auth/frame_auth.h"
#include "engine/checksum/crc32c.h"
#include "engine/stream/batch_format.h"
#include "engine/stream/receiving.h"
#include "engine/stream/streams.h"

namespace lanecast::engine::stream {

using algos::Rank;

// ---------------------------------------------------------------- every member

// A stream this member starts taking part in (table_ makes its state:
// its window of slots, its place in the tree), its share of the owed runs
// and (the first time) the delivery ring. Done once per stream, on its
// first frame: the only allocations streams make.
StreamState* Receiving::open(uint16_t slot, Rank publisher, uint16_t index, uint64_t now) {
  bool opened = false;
  StreamState& s = core_.table.open(slot, publisher, index, now, &opened);
  if (!opened) return &s;
  // The batches owed to one child merge into runs unless other sends come
  // between them: at worst a run per batch of the window, per child.
  core_.host.grow_runs(core_.cfg.streams.window_batches * s.tree.children());
  delivery_.open(core_.cfg.streams.delivery_bytes, core_.max_message);
  return &s;
}

// A stream's turn at every member: delivers what waits for the
// application, lets a member whose application took nothing for the
// deadline leave the stream, moves the marks, watches the gap, tells of an
// eviction, and sends the report due (the publisher has no parent).
bool Receiving::turn(StreamState& s, uint64_t now) {
  const uint64_t delay = static_cast<uint64_t>(core_.cfg.streams.report_us * 1000);
  if (s.deliver.next < s.received_end) {
    deliver_stream(s, now);
    const uint64_t evict_ns = static_cast<uint64_t>(core_.cfg.streams.evict_after_ms * 1e6);
    if (evict_ns > 0 && !s.evicted && s.deliver.full_since_ns != 0 && now > s.deliver.full_since_ns + evict_ns) evict_self(s, now);
    update_marks(s, now);
    // Still behind: a full ring the application is draining, or a gap.
    if (s.deliver.next < s.received_end) core_.due_ns = std::min(core_.due_ns, now + delay);
    watch_gap(s, now);
    if (core_.failed) return false;
  }
  if (s.evicted && s.evict_notice_next < core_.cfg.nodes) {
    frames_.tell_eviction(s, now);
    core_.due_ns = std::min(core_.due_ns, now + delay);
  }
  if (s.pub.shared == nullptr) {
    // Over multicast what it holds is news too (the publisher repairs what
    // it does not), but every member reports to the publisher, not a
    // parent each: progress waits five report intervals, a gap one.
    const bool news = s.books.mark > s.books.reported || (core_.cfg.streams.multicast && s.held_end > s.books.reported_held);
    const uint64_t news_delay =
        core_.cfg.streams.multicast && std::max(s.held_end, s.deliver.next) >= s.received_end ? 5 * delay : delay;
    const bool quiet_since = now >= s.books.last_report_ns + (news ? news_delay : kRefreshNs);
    const bool refresh = s.books.mark > 0 && now < s.last_activity_ns + kRefreshForNs;
    if ((news || refresh) && quiet_since) frames_.send_report(s, now);
    if (news || refresh)
      core_.due_ns = std::min(core_.due_ns, s.books.last_report_ns + (news ? news_delay : kRefreshNs));
  }
  return true;
}


// Keeps a batch in its slot and owes it to each child (the same buffer,
// shared by reference when sent).
void Receiving::hold_batch(StreamState& s, uint64_t batch, rte_mbuf* payload, uint32_t len, uint32_t crc,
                      const wire::Seal& seal, uint32_t records, uint64_t first_msg, uint64_t now) {
  BatchSlot& b = s.slot_of(batch);
  const uint64_t msgs_after = b.msgs_after, bytes_after = b.bytes_after;
  b = BatchSlot{payload, batch, len, crc, records, first_msg, msgs_after, bytes_after, seal};
  s.received_end = std::max(s.received_end, batch + 1);
  s.last_activity_ns = now;
  s.held_end = std::max(s.held_end, s.deliver.next);
  while (s.held_end < s.received_end && s.holds(s.held_end)) ++s.held_end;
  if (s.pub.shared != nullptr && core_.multicast) return;  // to the group address, not to each child (stream_multicast.cc)
  for (uint32_t i = 0; i < s.tree.children(); ++i) {
    if (core_.host.owe_batch(s.tree.child(i), static_cast<uint32_t>(batch), s.slot)) ++core_.owed;
    else core_.host.internal_error();
  }
}

// Delivers what is in order: every message of every batch held from
// deliver_next on, a message in pieces once all its pieces are here. Stops
// at a gap, or when the delivery ring is full (the rest waits for the
// application: since when it waits with nothing taken is noted for the
// slow-member policy). A member that left the stream for being slow
// delivers nothing more: the batches that arrived in order only move it on.
void Receiving::deliver_stream(StreamState& s, uint64_t now) {
  s.deliver.missing = DeliveryPosition::kNoBatch;
  bool took = false;
  while (s.deliver.next < s.received_end) {
    BatchSlot& b = s.slot_of(s.deliver.next);
    if (b.payload == nullptr || b.batch != s.deliver.next) {  // a gap: wait for it
      s.deliver.missing = s.deliver.next;
      break;
    }
    const uint8_t* base = rte_pktmbuf_mtod(b.payload, const uint8_t*);
    if (s.evicted || s.deliver.offset >= b.len) {
      if (s.evicted) core_.counters.stream_batches_skipped.add();
      ++s.deliver.next;
      s.deliver.offset = 0;
      continue;
    }
    uint32_t used = 0;
    const uint64_t seq = s.deliver.seq;
    const bool went = deliver_message(s, base + s.deliver.offset, &used);
    took = took || s.deliver.seq != seq;
    if (!went) {
      if (used != 0) s.deliver.full_since_ns = 0;                            // a piece is missing
      else if (took || s.deliver.full_since_ns == 0) s.deliver.full_since_ns = now;  // the ring is full
      return;
    }
    s.deliver.offset += used;
  }
  s.deliver.full_since_ns = 0;
}

// One message from the record at `rec`: handed to the handler or written to
// the delivery ring. *used: the bytes of this batch it took. A message in
// pieces moves the cursor into the batch of its last piece itself. False:
// it cannot go yet (*used 0: the ring is full; *used 1: a piece is missing).
// The record's bounds were checked on arrival (records_valid).
bool Receiving::deliver_message(StreamState& s, const uint8_t* rec, uint32_t* used) {
  const RecordHead h = read_head(rec);
  const uint32_t piece = h.piece & kPieceMask;
  DeliveredHead dh{s.deliver.seq, h.timestamp_ns, s.publisher, s.index, 0};
  if (h.piece & kContinuation) {
    // A piece whose first piece was never seen here: only a publisher that
    // breaks the format sends this. Counted and skipped.
    core_.counters.rx_stream_bad.add();
    *used = kHeadBytes + piece;
    return true;
  }
  if (!(h.piece & kMorePieces)) {
    if (!delivery_.put(dh, rec + kHeadBytes, piece)) {
      *used = 0;  // the ring is full
      return false;
    }
    if (!delivery_.to_handler()) core_.shared.delivered_bytes.add(piece);  // copied into the ring
    *used = kHeadBytes + piece;
    ++s.deliver.seq;
    core_.counters.stream_msgs_delivered.add();
    note_delivered(s, piece);
    return true;
  }
  // A message in pieces: every later piece starts a following batch.
  if (h.message_len > core_.max_message) {
    core_.counters.rx_stream_bad.add();
    *used = kHeadBytes + piece;
    return true;
  }
  uint64_t have = piece, last = s.deliver.next;
  uint32_t last_piece = 0;
  while (have < h.message_len) {
    ++last;
    const BatchSlot& b = s.slot_of(last);
    if (last >= s.received_end || b.payload == nullptr || b.batch != last) {
      s.deliver.missing = last;
      *used = 1;
      return false;
    }
    const RecordHead c = read_head(rte_pktmbuf_mtod(b.payload, const uint8_t*));
    last_piece = c.piece & kPieceMask;
    // Every piece after the first continues this message, and the pieces add
    // up to its length exactly: the last says so, the others say more
    // follow. Anything else (a publisher that breaks the format) would copy
    // past the buffer reserved for message_len bytes; the message is refused.
    const bool more = (c.piece & kMorePieces) != 0;
    if (!(c.piece & kContinuation) || c.message_len != h.message_len || last_piece > h.message_len - have ||
        more != (have + last_piece < h.message_len)) {
      core_.counters.rx_stream_bad.add();
      *used = kHeadBytes + piece;
      return true;
    }
    have += last_piece;
  }
  uint8_t* dst = delivery_.begin(dh, h.message_len);
  if (dst == nullptr) {
    *used = 0;  // the ring is full
    return false;
  }
  std::memcpy(dst, rec + kHeadBytes, piece);
  uint64_t at = piece;
  for (uint64_t b = s.deliver.next + 1; b <= last; ++b) {
    const uint8_t* p = rte_pktmbuf_mtod(s.slot_of(b).payload, const uint8_t*);
    const uint32_t n = read_head(p).piece & kPieceMask;
    std::memcpy(dst + at, p + kHeadBytes, n);
    at += n;
  }
  delivery_.finish(dh, dst, h.message_len);
  if (!delivery_.to_handler()) core_.shared.delivered_bytes.add(h.message_len);
  ++s.deliver.seq;
  core_.counters.stream_msgs_delivered.add();
  note_delivered(s, h.message_len);
  // The cursor moves past the last piece, in its batch.
  s.deliver.next = last;
  s.deliver.offset = kHeadBytes + last_piece;
  *used = 0;
  return true;
}

void Receiving::note_delivered(StreamState& s, uint64_t bytes) {
  StreamMirror& m = s.mirror;
  m.delivered_msgs.store(m.delivered_msgs.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  m.delivered_bytes.store(m.delivered_bytes.load(std::memory_order_relaxed) + bytes, std::memory_order_relaxed);
}

// The subtree's mark: batches below it are delivered here and in every
// child's subtree. Slots below it are let go; the publisher's mark is the
// group's stable point.
void Receiving::update_marks(StreamState& s, uint64_t now) {
  uint64_t mark = s.deliver.next;
  uint32_t slowest = core_.cfg.rank;
  for (size_t i = 0; i < s.books.child_mark.size(); ++i)
    if (s.books.child_mark[i] < mark) {
      mark = s.books.child_mark[i];
      slowest = s.books.child_slowest[i];
    }
  StreamMirror& mirror = s.mirror;
  mirror.batches_held.store(s.received_end - s.released, std::memory_order_relaxed);
  mirror.slowest.store(slowest, std::memory_order_relaxed);
  mirror.slowest_lag.store(s.received_end - mark, std::memory_order_relaxed);
  s.books.slowest = slowest;
  if (mark <= s.books.mark) return;
  s.books.mark = mark;
  release_batches(s, mark);
  if (s.pub.shared != nullptr) return;
  // Report at once when a good part of the window moved; otherwise soon.
  if (mark - s.books.reported >= std::max<uint64_t>(1, s.slots.size() / 8)) frames_.send_report(s, now);
}

void Receiving::release_batches(StreamState& s, uint64_t below) {
  for (; s.released < below; ++s.released) {
    BatchSlot& b = s.slot_of(s.released);
    if (b.payload == nullptr || b.batch != s.released) continue;
    if (s.pub.shared != nullptr) {
      s.pub.shared->stable_bytes.store(b.bytes_after, std::memory_order_relaxed);
      s.pub.shared->stable_msgs.store(b.msgs_after, std::memory_order_release);
    }
    rte_pktmbuf_free(b.payload);
    b.payload = nullptr;
  }
}

}  // namespace lanecast::engine::stream
