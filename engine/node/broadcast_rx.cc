// Broadcast: its frames received - checked against the running broadcast's
// plan, their payloads copied into the application's buffer with their CRC
// (or seal) checked, held and handed to the machine; a later broadcast's
// kept in the stash and replayed when it starts.
#include <rte_mbuf.h>

#include "engine/node/broadcast_take.h"

namespace lanecast::engine {

using algos::Rank;

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
