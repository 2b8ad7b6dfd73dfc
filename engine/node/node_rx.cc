// Node: the receive path. A frame is checked in order - link header, lanecast
// header, group, source rank and the link address it came from - and then is
// an ack for one of our channels, data for a channel and the machine, or a
// datagram for the machine. Every frame dropped is counted under its reason.
#include <rte_mbuf.h>
#include <rte_memcpy.h>

#include <algorithm>

#include "engine/auth/frame_auth.h"
#include "engine/checksum/crc32c.h"
#include "engine/node/node.h"
#include "engine/node/node_sink.h"

namespace lanecast::engine {

using algos::Rank;

void Node::handle_frame(rte_mbuf* m, uint16_t lane, uint64_t now) {
  counters_.rx_frames.add();
  const auto* link = rte_pktmbuf_mtod(m, const uint8_t*);
  if (m->data_len < rx_link_bytes_ || !port_.accepts(link)) {
    counters_.rx_not_for_us.add();
    rte_pktmbuf_free(m);
    return;
  }
  wire::Parsed p;
  const wire::Verdict v = wire::parse(m, rx_link_bytes_, &p);
  if (v != wire::Verdict::Ok) {
    counters_.rx_malformed[static_cast<size_t>(v)].add();
    rte_pktmbuf_free(m);
    return;
  }
  if (p.group != cfg_.group_id) {
    counters_.rx_foreign_group.add();
    rte_pktmbuf_free(m);
    return;
  }
  if (p.type == wire::FrameType::Hello) {  // a member still looking for its group (bootstrap)
    counters_.rx_hello.add();
    rte_pktmbuf_free(m);
    return;
  }
  if (p.epoch != cfg_.epoch) {
    counters_.rx_wrong_epoch.add();
    rte_pktmbuf_free(m);
    return;
  }
  if (p.src >= cfg_.nodes || p.src == cfg_.rank) {
    counters_.rx_bad_source.add();
    rte_pktmbuf_free(m);
    return;
  }
  // A rank speaks only from its own address: otherwise any host on the
  // segment could acknowledge for a member that never got the data.
  if (!port_.is_from(link, addrs_[p.src])) {
    counters_.rx_spoofed.add();
    rte_pktmbuf_free(m);
    return;
  }
  // With a key, nothing of a frame is believed before its seal opened:
  // source addresses can be forged on the segment, tags cannot.
  if (auth_ != nullptr && !open_sealed(m, p)) return;
  heard_ns_[p.src] = std::max<uint64_t>(now, 1);
  last_heard_ns_.store(heard_ns_[p.src], std::memory_order_relaxed);
  if (fail_stop_.broken() && p.type != wire::FrameType::Failed) {
    // Whoever still sends has not heard: tell it (again), take nothing.
    fail_stop_.sent_after_broken(p.src, now);
    rte_pktmbuf_free(m);
    return;
  }
  switch (p.type) {
    case wire::FrameType::Ack:
      counters_.rx_acks.add();
      handle_ack(p.src, p.ack, p.flags, now);
      rte_pktmbuf_free(m);
      return;
    case wire::FrameType::Data:
      handle_data(m, p, now);
      return;
    case wire::FrameType::Datagram:
      handle_datagram(m, p, now);
      return;
    case wire::FrameType::Hello:  // dropped above
      break;
    case wire::FrameType::Failed:
      heard_failure(p, now);
      break;
  }
  (void)lane;
  rte_pktmbuf_free(m);
}

void Node::handle_ack(Rank src, const wire::AckBody& ack, uint16_t flags, uint64_t now) {
  if (ack.lane >= cfg_.lanes) {
    counters_.rx_bad_ack.add();
    return;
  }
  Channel& c = channel(src, ack.lane);
  const bool duplicates = (flags & wire::kFlagDuplicates) != 0;
  const reliable::SendChannel::AckResult r =
      c.tx.on_ack(ack.cum_ack, ack.sack, now, duplicates, {ack.newest_seq, ack.newest_rx_ns});
  if (!r.valid) {
    counters_.rx_bad_ack.add();
    return;
  }
  streams_.acked(r.newly_stream);
  // A fresh RTT sample may have brought the channel's deadline before the
  // next scan: the timer must still fire on time.
  if (!c.tx.idle()) note_deadline(c.tx.deadline());
  channels_.on_ack(c, r);
  if (!rates_.empty()) adapt_rate(c.lane, r, now);
}

bool Node::plan_agrees(const wire::DataBody& d) const {
  return d.root == op_.sub.root && d.total_len == op_.sub.size && d.algo == static_cast<uint8_t>(op_.sub.algo) &&
         d.segment_bytes == cfg_.segment_bytes;
}

// A frame of the running broadcast, checked against its plan. A frame of a
// different broadcast (root, size, algorithm, segment size) fails it; one
// whose segment does not fit the plan is dropped and counted.
bool Node::fits_op(const wire::DataBody& d, Rank src, uint64_t now, bool signal) {
  if (!plan_agrees(d)) {
    finish(now, OpError::Mismatch, src);
    return false;
  }
  if (signal ? d.payload_len != 0 : !segment_valid(d)) {
    counters_.rx_bad_segment.add();
    return false;
  }
  return true;
}

bool Node::segment_valid(const wire::DataBody& d) const {
  if (d.segment >= op_.plan->segments()) return false;
  const algos::Segment s = op_.plan->segment(d.segment);
  return d.offset == s.offset && d.payload_len == s.length;
}

namespace {

// Copies `len` bytes of an mbuf chain, from `offset` on, to dst.
bool read_into(const rte_mbuf* m, uint32_t offset, uint32_t len, void* dst) {
  const void* src = rte_pktmbuf_read(m, offset, len, dst);  // copies only when split
  if (src == nullptr) return false;
  if (src != dst) rte_memcpy(dst, src, len);
  return true;
}

}  // namespace

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
bool Node::take_payload(const rte_mbuf* m, const wire::Parsed& p) {
  const wire::DataBody& d = p.data;
  if (op_.sub.root == cfg_.rank || store_.held(d.segment)) return true;
  std::byte* dst = op_.sub.buffer + d.offset;
  if (auth_ != nullptr) {
    if (!read_into(m, p.payload_offset, d.payload_len, dst)) return false;  // parse() checked the length
    return seal_ok(reinterpret_cast<const uint8_t*>(dst), d.payload_len, p);
  }
  uint32_t crc;
  if (!crc32c_mbuf_copy(m, p.payload_offset, d.payload_len, dst, &crc) || crc != d.payload_crc) {
    counters_.rx_malformed[static_cast<size_t>(wire::Verdict::BadPayloadCrc)].add();
    return false;
  }
  return true;
}

// A payload's seal, by whoever made the bytes (the frame names them: the
// broadcast's root, the stream's publisher). Always true without a key.
bool Node::seal_ok(const uint8_t* bytes, uint32_t len, const wire::Parsed& p) {
  if (auth_ == nullptr || auth_->payload_ok(bytes, len, p.data.root, p.payload_seal)) return true;
  counters_.rx_bad_payload_seal.add();
  return false;
}

// The same for a payload that stays in its frame (kept for later): its CRC,
// or with a key its seal, read where it lies (copied out only if the port
// split it).
bool Node::payload_sound(const rte_mbuf* m, const wire::Parsed& p) {
  if (auth_ == nullptr) {
    if (wire::payload_crc_ok(m, p)) return true;
    counters_.rx_malformed[static_cast<size_t>(wire::Verdict::BadPayloadCrc)].add();
    return false;
  }
  const void* bytes = rte_pktmbuf_read(m, p.payload_offset, p.data.payload_len, scratch_.data());
  return bytes != nullptr && seal_ok(static_cast<const uint8_t*>(bytes), p.data.payload_len, p);
}

// A group with a key: the frame's own seal - a tag by its sender over the
// frame as it was addressed, under a counter that sender's window has not
// seen - or the frame goes, counted.
bool Node::open_sealed(rte_mbuf* m, const wire::Parsed& p) {
  if (!p.sealed) {
    counters_.rx_unsealed.add();
    rte_pktmbuf_free(m);
    return false;
  }
  switch (auth_->open_frame(rte_pktmbuf_mtod(m, const uint8_t*) + (rx_link_bytes_ - sealed_link_bytes_), sealed_link_bytes_,
                            p.seal_at, p.src)) {
    case auth::FrameAuth::Verdict::Ok: return true;
    case auth::FrameAuth::Verdict::BadTag: counters_.rx_bad_tag.add(); break;
    case auth::FrameAuth::Verdict::Replayed: counters_.rx_replayed.add(); break;
    case auth::FrameAuth::Verdict::Stale: counters_.rx_stale_counter.add(); break;
  }
  rte_pktmbuf_free(m);
  return false;
}

void Node::handle_data(rte_mbuf* m, const wire::Parsed& p, uint64_t now) {
  const wire::DataBody& d = p.data;
  const Rank src = p.src;
  if (d.lane >= cfg_.lanes) {
    counters_.rx_bad_segment.add();
    rte_pktmbuf_free(m);
    return;
  }
  Channel& c = channel(src, d.lane);
  switch (c.rx.check(d.seq)) {
    case reliable::RecvChannel::Check::Duplicate:
      counters_.rx_duplicate.add();
      c.rx.note_duplicate();
      acks_.ack_now(channels_.id_of(c));  // our ack was lost or late
      rte_pktmbuf_free(m);
      return;
    case reliable::RecvChannel::Check::OutOfWindow:
      // In step a sender never sends past this window, so its frame here
      // says the two ends differ (or it is forged): the ack tells the
      // sender where this window is (send_channel.h: fillers).
      counters_.rx_out_of_window.add();
      acks_.ack_now(channels_.id_of(c));
      rte_pktmbuf_free(m);
      return;
    case reliable::RecvChannel::Check::New:
      break;
  }
  c.rx.note_arrival(d.seq, now);
  if (p.flags & wire::kFlagAbandoned) {
    // Its broadcast failed at the sender: keep the channel in step, drop it.
    c.rx.accept(d.seq);
    acks_.ack_now(channels_.id_of(c));
    counters_.rx_abandoned.add();
    if (p.flags & wire::kFlagStream) streams_.given_up(p, now);
    rte_pktmbuf_free(m);
    return;
  }

  peer_counters_[src].rx_data.add();
  if (p.flags & wire::kFlagStream) {  // a stream's batch (engine/stream/): the channel takes it here
    const uint32_t id = channels_.id_of(c);
    streams_.handle_batch(m, p, now, [&](bool held) {
      if (held) {
        c.rx.accept(d.seq);
        acks_.ack_now(id);
      } else {
        acks_.accepted(id, (p.flags & wire::kFlagAckNow) != 0, c.rx.accept(d.seq), now);
      }
    });
    return;
  }
  const bool signal = (p.flags & wire::kFlagSignal) != 0;
  const uint32_t current = op_.active ? op_.sub.op : next_op_;
  if (op_.active && d.op == current) {
    if (!fits_op(d, src, now, signal)) {
      rte_pktmbuf_free(m);
      return;
    }
    if (!signal && !take_payload(m, p)) {  // counted
      rte_pktmbuf_free(m);
      return;
    }
    acks_.accepted(channels_.id_of(c), (p.flags & wire::kFlagAckNow) != 0, c.rx.accept(d.seq), now);
    if (signal) {
      rte_pktmbuf_free(m);
      accept_signal(src, d, now);
      return;
    }
    counters_.rx_data.add();
    accept_segment(detach_payload(m, p.payload_offset), src, d.lane, d, p.payload_seal, /*in_buffer=*/true, now);
    return;
  }
  if (stashable(d.op)) {
    // A later operation, before this member posted it: keep it (and ack it)
    // if there is room, so a fast root is not held back by a slow
    // application. As far ahead as an application may post (64): a member
    // that posted several broadcasts at once (a barrier of broadcasts, one
    // per root) meets roots that are several broadcasts ahead of it. Its
    // payload is checked now: once acknowledged, a frame is never sent again.
    if (stash_.full()) {
      counters_.rx_early_dropped.add();
      rte_pktmbuf_free(m);
      return;
    }
    if (!signal && !payload_sound(m, p)) {  // counted
      rte_pktmbuf_free(m);
      return;
    }
    acks_.accepted(channels_.id_of(c), (p.flags & wire::kFlagAckNow) != 0, c.rx.accept(d.seq), now);
    rte_mbuf* payload = nullptr;
    if (signal) rte_pktmbuf_free(m);
    else payload = detach_payload(m, p.payload_offset);
    stash_.keep(Stash::Entry{payload, src, d.lane, signal, false, d, p.payload_seal});
    return;
  }
  if (reliable::seq_before(d.op, current)) {
    // Already finished here: take it off the sender's hands.
    c.rx.accept(d.seq);
    acks_.ack_now(channels_.id_of(c));
    counters_.rx_stale_op.add();
    rte_pktmbuf_free(m);
    return;
  }
  counters_.rx_early_dropped.add();  // further ahead: not acknowledged, sent again later
  rte_pktmbuf_free(m);
}

// A multicast copy: no channel, no ack. The running broadcast's are used; a
// later broadcast's are kept in the stash while it is less than half full,
// like early reliable frames (an InfiniBand UD queue pair drops a multicast
// that comes before the receive is posted - Hoefler, Siebert & Rehm's
// reason for the root delay - but this engine always has receive buffers, so
// a member that leaves a barrier late still takes the root's multicast).
// Others are counted and dropped: their senders' machines repair.
void Node::handle_datagram(rte_mbuf* m, const wire::Parsed& p, uint64_t now) {
  const wire::DataBody& d = p.data;
  // A stream's report or eviction notice, or a batch from the group address.
  if (p.flags & wire::kFlagStream) return streams_.handle_datagram(m, p, now);
  if (!op_.active || d.op != op_.sub.op) {
    const uint32_t current = op_.active ? op_.sub.op : next_op_;
    if (reliable::seq_before(d.op, current)) {
      counters_.rx_datagram_stale.add();
    } else if (stashable(d.op) && stash_.room_for_datagram() && d.lane < cfg_.lanes) {
      if (!payload_sound(m, p)) {  // counted
        rte_pktmbuf_free(m);
        return;
      }
      stash_.keep(Stash::Entry{detach_payload(m, p.payload_offset), p.src, d.lane, false, true, d, p.payload_seal});
      return;
    } else {
      counters_.rx_datagram_early.add();
    }
    rte_pktmbuf_free(m);
    return;
  }
  if (d.lane >= cfg_.lanes || !fits_op(d, p.src, now)) {
    rte_pktmbuf_free(m);
    return;
  }
  if (!take_payload(m, p)) {  // counted
    rte_pktmbuf_free(m);
    return;
  }
  counters_.rx_datagrams.add();
  accept_segment(detach_payload(m, p.payload_offset), p.src, d.lane, d, p.payload_seal, /*in_buffer=*/true, now);
}

// Leaves only the payload: a frame from a ring port is a header mbuf chained
// to the sender's payload mbuf (a single segment), which we keep; a frame
// from a NIC-like port is one buffer, whose start we move past the headers.
// No byte is copied, and no reference count is touched: the header mbuf is
// unlinked and given back, and the reference the frame held on the payload
// becomes ours.
rte_mbuf* Node::detach_payload(rte_mbuf* m, uint32_t payload_offset) {
  if (m->data_len == payload_offset && m->next != nullptr) {
    rte_mbuf* payload = m->next;
    m->next = nullptr;
    m->nb_segs = 1;
    m->pkt_len = m->data_len;
    rte_pktmbuf_free_seg(m);
    return payload;
  }
  rte_pktmbuf_adj(m, static_cast<uint16_t>(payload_offset));
  return m;
}


// NodeConfig::test_copy_forwarded_payloads: the copying forward path the
// zero-copy test must notice. Never on in production.
rte_mbuf* Node::copy_payload(rte_mbuf* payload) {
  rte_mbuf* fresh = rte_pktmbuf_alloc(pools_.payload);
  if (fresh == nullptr) return payload;
  void* dst = rte_pktmbuf_append(fresh, static_cast<uint16_t>(payload->pkt_len));
  if (dst == nullptr || !read_into(payload, 0, payload->pkt_len, dst)) {
    rte_pktmbuf_free(fresh);
    return payload;
  }
  rte_pktmbuf_free(payload);
  return fresh;
}

void Node::accept_segment(rte_mbuf* payload, Rank src, uint16_t lane, const wire::DataBody& d,
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

void Node::accept_signal(Rank src, const wire::DataBody& d, uint64_t now) {
  op_.last_rx_ns = now;
  counters_.rx_signals.add();
  Sink sink(*this, now);
  op_.machine->on_signal(src, d.segment, sink);
}

// Frames of this operation that arrived before it was posted (the stash).
void Node::replay_stash(uint64_t now) {
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
      counters_.rx_datagrams.add();
    } else {
      counters_.rx_data.add();
    }
    accept_segment(s.frame, s.src, s.lane, s.data, s.seal, /*in_buffer=*/false, now);
  });
}

}  // namespace lanecast::engine
