// Broadcast: a frame of the running broadcast received - checked against
// its plan, its payload copied into the application's buffer with its CRC
// (or seal) checked, held and handed to the machine - inline, for the two
// places that take one: the node's receive path (node_rx.cc), where every
// data frame comes through, and the broadcast's other receive steps
// (broadcast_rx.cc: multicast copies, the stash replayed). With
// Node::handle_data, RecvChannel::accept and AckSchedule::accepted inline
// too, the receive path of a data frame is one function: the calls and the
// registers each saved had cost 47 instructions a forwarded 64-byte frame
// (1 140 -> 1 092, tests/bench/forward_instructions.sh).
#pragma once

#include <rte_mbuf.h>

#include <algorithm>

#include "engine/checksum/crc32c.h"
#include "engine/checksum/crc32c_mbuf.h"
#include "engine/node/broadcast.h"
#include "engine/node/broadcast_sink.h"
#include "engine/node/payload_reads.h"
#include "engine/node/rx_prefetch.h"

namespace lanecast::engine {

// A frame of the running broadcast, checked against its plan. A frame of a
// different broadcast (root, size, algorithm, segment size) fails it; one
// whose segment (index, offset, length) does not fit the plan is dropped
// and counted.
__rte_always_inline bool Broadcast::fits_op(const wire::DataBody& d, algos::Rank src, uint64_t now, bool signal) {
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

__rte_always_inline void Broadcast::accept_segment(rte_mbuf* payload, algos::Rank src, uint16_t lane, const wire::DataBody& d,
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

// A data frame a channel found new: the running broadcast's taken (its
// payload checked and copied, the machine told), a later broadcast's
// stashed, an earlier one's answered as stale.
__rte_always_inline Broadcast::Take Broadcast::take_data(rte_mbuf* m, const wire::Parsed& p, uint64_t now) {
  const wire::DataBody& d = p.data;
  const algos::Rank src = p.src;
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

}  // namespace lanecast::engine
