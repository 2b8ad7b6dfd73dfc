// Broadcast: its frames received - checked against the running broadcast's
// plan, their payloads copied into the application's buffer with their CRC
// (or seal) checked, held and handed to the machine; a later broadcast's
// kept in the stash and replayed when it starts.
#include <rte_mbuf.h>

#include <algorithm>

#include "engine/checksum/crc32c.h"
#include "engine/node/broadcast.h"
#include "engine/node/broadcast_sink.h"
#include "engine/node/payload_reads.h"
#include "engine/node/rx_prefetch.h"

namespace lanecast::engine {

using algos::Rank;

Broadcast::Take Broadcast::take_data(rte_mbuf* m, const wire::Parsed& p, uint64_t now) {
  const wire::DataBody& d = p.data;
  const Rank src = p.src;
  const bool signal = (p.flags & wire::kFlagSignal) != 0;
  const uint32_t current = current_op();
  if (op_.active && d.op == current) {
    if (!fits_op(d, src, now, signal) || (!signal && !take_payload(m, p))) {  // counted
      rte_pktmbuf_free(m);
      return Take::kDrop;
    }
    if (signal) {
      rte_pktmbuf_free(m);
      accept_signal(src, d, now);
      return Take::kAccept;
    }
    parts_.counters.rx_data.add();
    stage_mark(Stage::kPayload);
    rte_mbuf* payload = payload_of(m, p.payload_offset, parts_.frames.spent_headers());
    accept_segment(payload, src, d.lane, d, p.payload_seal, /*in_buffer=*/true, now);
    stage_mark(Stage::kMachine);
    return Take::kAccept;
  }
  if (stashable(d.op)) {
    // A later operation, before this member posted it: keep it (and ack it)
    // if there is room, so a fast root is not held back by a slow
    // application. As far ahead as an application may post (64): a member
    // that posted several broadcasts at once (a barrier of broadcasts, one
    // per root) meets roots that are several broadcasts ahead of it. Its
    // payload is checked now: once acknowledged, a frame is never sent again.
    if (stash_.full()) {
      parts_.counters.rx_early_dropped.add();
      rte_pktmbuf_free(m);
      return Take::kDrop;
    }
    if (!signal && !payload_sound(m, p)) {  // counted
      rte_pktmbuf_free(m);
      return Take::kDrop;
    }
    rte_mbuf* payload = nullptr;
    if (signal) rte_pktmbuf_free(m);
    else payload = payload_of(m, p.payload_offset, parts_.frames.spent_headers());
    stash_.keep(Stash::Entry{payload, src, d.lane, signal, false, d, p.payload_seal});
    return Take::kAccept;
  }
  rte_pktmbuf_free(m);
  if (reliable::seq_before(d.op, current)) {
    // Already finished here: take it off the sender's hands.
    parts_.counters.rx_stale_op.add();
    return Take::kStale;
  }
  parts_.counters.rx_early_dropped.add();  // further ahead: not acknowledged, sent again later
  return Take::kDrop;
}

// A multicast copy: no channel, no ack. The running broadcast's are used; a
// later broadcast's are kept in the stash while it is less than half full,
// like early reliable frames (an InfiniBand UD queue pair drops a multicast
// that comes before the receive is posted - Hoefler, Siebert & Rehm's
// reason for the root delay - but this engine always has receive buffers, so
// a member that leaves a barrier late still takes the root's multicast).
// Others are counted and dropped: their senders' machines repair.
void Broadcast::take_datagram(rte_mbuf* m, const wire::Parsed& p, uint64_t now) {
  const wire::DataBody& d = p.data;
  if (!op_.active || d.op != op_.sub.op) {
    const uint32_t current = current_op();
    if (reliable::seq_before(d.op, current)) {
      parts_.counters.rx_datagram_stale.add();
    } else if (stashable(d.op) && stash_.room_for_datagram() && d.lane < cfg_.lanes) {
      if (!payload_sound(m, p)) {  // counted
        rte_pktmbuf_free(m);
        return;
      }
      rte_mbuf* payload = payload_of(m, p.payload_offset, parts_.frames.spent_headers());
      stash_.keep(Stash::Entry{payload, p.src, d.lane, false, true, d, p.payload_seal});
      return;
    } else {
      parts_.counters.rx_datagram_early.add();
    }
    rte_pktmbuf_free(m);
    return;
  }
  if (d.lane >= cfg_.lanes || !fits_op(d, p.src, now) || !take_payload(m, p)) {  // counted
    rte_pktmbuf_free(m);
    return;
  }
  parts_.counters.rx_datagrams.add();
  rte_mbuf* payload = payload_of(m, p.payload_offset, parts_.frames.spent_headers());
  accept_segment(payload, p.src, d.lane, d, p.payload_seal, /*in_buffer=*/true, now);
}

// A frame of the running broadcast, checked against its plan. A frame of a
// different broadcast (root, size, algorithm, segment size) fails it; one
// whose segment (index, offset, length) does not fit the plan is dropped
// and counted.
__rte_always_inline bool Broadcast::fits_op(const wire::DataBody& d, Rank src, uint64_t now, bool signal) {
  const bool agrees = d.root == op_.sub.root && d.total_len == op_.sub.size &&
                      d.algo == static_cast<uint8_t>(op_.sub.algo) && d.segment_bytes == cfg_.segment_bytes;
  if (!agrees) {
    finish(now, OpError::Mismatch, src);
    return false;
  }
  bool valid;
  if (signal) {
    valid = d.payload_len == 0;
  } else if (d.segment >= op_.plan->segments()) {
    valid = false;
  } else {
    const algos::Segment s = op_.plan->segment(d.segment);
    valid = d.offset == s.offset && d.payload_len == s.length;
  }
  if (!valid) parts_.counters.rx_bad_segment.add();
  return valid;
}

// The payload of a frame of the running broadcast, checked against its CRC
// while it is copied into the application's buffer: one pass over the bytes.
// A segment we already hold (a second copy) or the root's own is not copied,
// and its payload is never used. False: the payload is corrupt; the frame is
// dropped and, unacknowledged, sent again by its sender. Bytes of a corrupt
// copy may sit in the buffer until the good copy overwrites them; the
// broadcast completes only when every segment arrived intact.
//
// With a key the payload's seal stands in for the CRC (it says more: the
// bytes are the root's), checked over the bytes just copied, still in
// cache: a forger's bytes with a CRC of their own stop here. Each failure is
// counted under its reason.
__rte_always_inline bool Broadcast::take_payload(const rte_mbuf* m, const wire::Parsed& p) {
  const wire::DataBody& d = p.data;
  if (op_.sub.root == cfg_.rank || store_.held(d.segment)) return true;
  std::byte* dst = op_.sub.buffer + d.offset;
  if (auth_ != nullptr) {
    if (!read_into(m, p.payload_offset, d.payload_len, dst)) return false;  // parse() checked the length
    if (!payload_seal_ok(auth_, parts_.counters.rx_bad_payload_seal, reinterpret_cast<const uint8_t*>(dst),
                         d.payload_len, p))
      return false;
  } else {
    uint32_t crc;
    if (!crc32c_mbuf_copy(m, p.payload_offset, d.payload_len, dst, &crc) || crc != d.payload_crc) {
      parts_.counters.rx_malformed[static_cast<size_t>(wire::Verdict::BadPayloadCrc)].add();
      return false;
    }
  }
  prefetch_next_segment(dst + d.payload_len, op_.sub.buffer + op_.sub.size, d.payload_len);
  return true;
}

// The same for a payload that stays in its frame (kept for later): its CRC,
// or with a key its seal, read where it lies (copied out only if the port
// split it).
bool Broadcast::payload_sound(const rte_mbuf* m, const wire::Parsed& p) {
  if (auth_ == nullptr) {
    if (wire::payload_crc_ok(m, p)) return true;
    parts_.counters.rx_malformed[static_cast<size_t>(wire::Verdict::BadPayloadCrc)].add();
    return false;
  }
  const void* bytes = rte_pktmbuf_read(m, p.payload_offset, p.data.payload_len, scratch_.data());
  return bytes != nullptr && payload_seal_ok(auth_, parts_.counters.rx_bad_payload_seal,
                                             static_cast<const uint8_t*>(bytes), p.data.payload_len, p);
}

// NodeConfig::test_copy_forwarded_payloads: the copying forward path the
// zero-copy test must notice. Never on in production.
rte_mbuf* Broadcast::copy_payload(rte_mbuf* payload) {
  rte_mbuf* fresh = rte_pktmbuf_alloc(parts_.payload_pool);
  if (fresh == nullptr) return payload;
  void* dst = rte_pktmbuf_append(fresh, static_cast<uint16_t>(payload->pkt_len));
  if (dst == nullptr || !read_into(payload, 0, payload->pkt_len, dst)) {
    rte_pktmbuf_free(fresh);
    return payload;
  }
  rte_pktmbuf_free(payload);
  return fresh;
}

__rte_always_inline void Broadcast::accept_segment(rte_mbuf* payload, Rank src, uint16_t lane, const wire::DataBody& d,
                                                   const wire::Seal& seal, bool in_buffer, uint64_t now) {
  op_.last_rx_ns = now;
  if (store_.held(d.segment) || op_.sub.root == cfg_.rank) {
    // A second copy of a segment (multicast + repair), or the root's own (a
    // copy it receives back, as in scatter_allgather's ring, is not needed).
    rte_pktmbuf_free(payload);
  } else {
    if (cfg_.test_copy_forwarded_payloads) payload = copy_payload(payload);
    // Replayed from the stash (checked when stashed): copy it in now.
    if (!in_buffer) read_into(payload, 0, d.payload_len, op_.sub.buffer + d.offset);
    store_.keep(d.segment, SegmentStore::Entry{payload, d.payload_crc, seal});
    if (++op_.held == op_.plan->segments()) op_.held_ns = std::max(now, op_.start_ns);
  }
  Sink sink(*this, now);
  op_.machine->on_segment(d.segment, src, lane, sink);
}

void Broadcast::accept_signal(Rank src, const wire::DataBody& d, uint64_t now) {
  op_.last_rx_ns = now;
  parts_.counters.rx_signals.add();
  Sink sink(*this, now);
  op_.machine->on_signal(src, d.segment, sink);
}

// Frames of this operation that arrived before it was posted (the stash).
void Broadcast::replay_stash(uint64_t now) {
  stash_.release(op_.sub.op, [&](Stash::Entry& s) {
    if (!op_.active || !fits_op(s.data, s.src, now, s.signal)) {
      if (s.frame != nullptr) rte_pktmbuf_free(s.frame);
      return;
    }
    if (s.signal) {
      accept_signal(s.src, s.data, now);
      return;
    }
    if (s.datagram) {
      parts_.counters.rx_datagrams.add();
    } else {
      parts_.counters.rx_data.add();
    }
    accept_segment(s.frame, s.src, s.lane, s.data, s.seal, /*in_buffer=*/false, now);
  });
}

}  // namespace lanecast::engine
