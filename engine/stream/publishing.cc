// Publishing (publishing.h): a publisher's messages wait in a ring its
// application fills (stream_state.h); at each turn the core cuts whatever
// is there into batches - as many messages per frame as fit, pieces of
// larger ones, nothing held back to wait for more - and each batch is held
// and owed to the children like a batch received (Receiving::hold_batch).
#include "engine/stream/publishing.h"

#include <rte_mbuf.h>

#include <algorithm>
#include <cstring>

#include "engine/auth/frame_auth.h"
#include "engine/checksum/crc32c.h"
#include "engine/stream/batch_format.h"
#include "engine/stream/receiving.h"
#include "engine/stream/streams.h"

namespace lanecast::engine::stream {

void Publishing::adopt(uint64_t now) {
  publishers_.adopt([&](PublisherShared& p) {
    if (core_.failed) {  // opened after this member's streams failed: told now, as the others were
      p.error_peer.store(streams_.error_peer(), std::memory_order_relaxed);
      p.error.store(static_cast<uint8_t>(streams_.error()), std::memory_order_release);
      return;
    }
    const std::optional<uint16_t> slot = core_.table.slot(core_.cfg.rank, p.index);
    if (!slot) {  // an index Member::open_stream refuses: the publisher's error
      p.error.store(static_cast<uint8_t>(OpError::Internal), std::memory_order_release);
      return;
    }
    StreamState* s = receiving_.open(*slot, core_.cfg.rank, p.index, now);
    s->pub.shared = &p;
    s->pub.ring = RecordRing(p.ring);
  });
}

// Cuts the messages waiting in the publisher's ring into one batch (all of
// them if they fit, else as much as fits, a large message in pieces). False
// when there is nothing to send or no slot free in the window.
bool Publishing::form_batch(StreamState& s, uint64_t now) {
  if (s.pub.next_batch - s.released >= s.slots.size()) return false;  // the window is full: wait for reports
  if (core_.multicast && s.mcast.next > 0 && !multicast_may_form(s, now)) return false;
  RecordView r = s.pub.ring.peek();
  if (r.data == nullptr) {
    if (s.pub.ring.corrupt()) streams_.fail(now, OpError::Internal, core_.cfg.rank);
    return false;
  }
  rte_mbuf* m = rte_pktmbuf_alloc(frames_.payload_pool());
  uint8_t* dst = m == nullptr ? nullptr : reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, static_cast<uint16_t>(core_.cfg.segment_bytes)));
  if (dst == nullptr) {
    if (m != nullptr) rte_pktmbuf_free(m);
    core_.shared.tx_alloc_failures.add();
    return false;
  }
  const uint64_t first_msg = s.pub.next_msg;
  uint32_t used = 0, records = 0, crc = 0;
  while (r.data != nullptr) {
    if (r.len < 8) {  // the application side writes a timestamp first, always
      streams_.fail(now, OpError::Internal, core_.cfg.rank);
      rte_pktmbuf_free(m);
      return false;
    }
    uint64_t ts;
    std::memcpy(&ts, r.data, 8);
    const uint32_t msg_len = r.len - 8;
    const uint32_t remaining = msg_len - s.pub.offset;
    if (core_.cfg.segment_bytes - used < kHeadBytes + (remaining > 0 ? 1 : 0)) break;
    const uint32_t piece = std::min(remaining, core_.cfg.segment_bytes - used - kHeadBytes);
    RecordHead h;
    h.piece = piece | (s.pub.offset > 0 ? kContinuation : 0) | (piece < remaining ? kMorePieces : 0);
    h.message_len = msg_len;
    h.timestamp_ns = ts;
    write_head(dst + used, h);
    if (frames_.auth() != nullptr) {  // the batch's seal stands in for its CRC
      std::memcpy(dst + used + kHeadBytes, r.data + 8 + s.pub.offset, piece);
    } else {
      crc = crc32c(crc, dst + used, kHeadBytes);
      crc = crc32c_copy(crc, dst + used + kHeadBytes, r.data + 8 + s.pub.offset, piece);
    }
    used += kHeadBytes + piece;
    ++records;
    core_.shared.root_copy_bytes.add(piece);
    if (piece < remaining) {
      s.pub.offset += piece;
      break;  // the frame is full
    }
    s.pub.offset = 0;
    s.pub.ring.pop();
    ++s.pub.next_msg;
    s.pub.bytes_done += msg_len;
    core_.counters.stream_msgs_published.add();
    r = s.pub.ring.peek();
  }
  rte_pktmbuf_trim(m, static_cast<uint16_t>(core_.cfg.segment_bytes - used));
  const uint64_t batch = s.pub.next_batch++;
  BatchSlot& b = s.slot_of(batch);
  b.msgs_after = s.pub.next_msg;  // messages numbered below it are complete
  b.bytes_after = s.pub.bytes_done;
  core_.counters.stream_batches_formed.add();
  // With a key the publisher seals the batch once; every forwarder carries the seal.
  const wire::Seal seal = frames_.auth() != nullptr ? frames_.auth()->seal_payload(dst, used) : wire::Seal{};
  receiving_.hold_batch(s, batch, m, used, crc, seal, records, first_msg, now);
  return true;
}

// A publisher's turn: over multicast each batch goes to the group address
// before the next is cut (multicast_may_form); otherwise every batch the
// window has room for is cut and owed to the children at once.
void Publishing::turn(StreamState& s, uint64_t now) {
  if (core_.multicast) {
    // Each batch goes to the group address before the next is cut
    // (multicast_may_form). A turn cuts one batch of what waits - what
    // comes meanwhile fills the next - unless more than a frame's worth
    // waits: then it cuts and sends full batches one after another, up
    // to kMulticastBatchesPerTurn. One batch a turn is at most a frame
    // of small messages, less than a fast stream publishes in the turn of
    // a core that also delivers, and a backlog left by a pause of the core
    // would take many turns to clear.
    multicast_batches(s, now);
    for (uint32_t n = 0; n < kMulticastBatchesPerTurn && form_batch(s, now); ++n) {
      multicast_batches(s, now);
      if (s.pub.ring.bytes_waiting() < core_.cfg.segment_bytes) break;
    }
    repair_batches(s, now);
  } else {
    while (form_batch(s, now)) {
    }
  }
}

}  // namespace lanecast::engine::stream
