// Node: the receive path. A frame is checked in order - link header, lanecast
// header, group, source rank and the link address it came from - and then is
// an ack for one of our channels, data for a channel and then the broadcast
// (broadcast_rx.cc) or the streams, or a datagram for either. Every frame
// dropped is counted under its reason.
#include <rte_mbuf.h>

#include <algorithm>

#include "engine/auth/frame_auth.h"
#include "engine/node/broadcast_take.h"
#include "engine/node/node.h"
#include "engine/wire/parse.h"

namespace lanecast::engine {

using algos::Rank;

void Node::handle_frame(rte_mbuf* m, bool addressed, uint64_t now) {
  const auto* link = rte_pktmbuf_mtod(m, const uint8_t*);
  if (m->data_len < rx_link_bytes_ || !addressed) {
    counters_.rx_not_for_us.add();
    rte_pktmbuf_free(m);
    return;
  }
  wire::Parsed p;
  const wire::Verdict v = wire::parse_frame(m, rx_link_bytes_, &p);  // inline (parse.h)
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
  peers_.heard(p.src, now);
  stage_mark(Stage::kChecks);
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
      stage_mark(Stage::kAcksIn);
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
  if (!c.tx.idle()) resends_.note_deadline(c.tx.deadline());
  channels_.on_ack(c, r);
  if (rates_.on()) rates_.adapt(c.lane, r, now);
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

// Inline in handle_frame, its one caller (with Broadcast::take_data,
// broadcast_take.h): a data frame's receive path is one function.
__rte_always_inline void Node::handle_data(rte_mbuf* m, const wire::Parsed& p, uint64_t now) {
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
  stage_mark(Stage::kChannel);
  if (p.flags & wire::kFlagAbandoned) {
    // Its broadcast failed at the sender: keep the channel in step, drop it.
    c.rx.accept(d.seq);
    acks_.ack_now(channels_.id_of(c));
    counters_.rx_abandoned.add();
    if (p.flags & wire::kFlagStream) streams_.given_up(p, now);
    rte_pktmbuf_free(m);
    return;
  }

  peers_.counters(src).rx_data.add();
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
  switch (broadcast_.take_data(m, p, now)) {  // the running broadcast's, or a later one's (broadcast_rx.cc)
    case Broadcast::Take::kAccept:
      acks_.accepted(channels_.id_of(c), (p.flags & wire::kFlagAckNow) != 0, c.rx.accept(d.seq), now);
      stage_mark(Stage::kChannel);
      return;
    case Broadcast::Take::kStale:
      // Already finished here: take it off the sender's hands.
      c.rx.accept(d.seq);
      acks_.ack_now(channels_.id_of(c));
      return;
    case Broadcast::Take::kDrop:
      return;
  }
}

// A multicast copy: no channel, no ack; the broadcast's (broadcast_rx.cc) or a stream's.
void Node::handle_datagram(rte_mbuf* m, const wire::Parsed& p, uint64_t now) {
  // A stream's report or eviction notice, or a batch from the group address.
  if (p.flags & wire::kFlagStream) return streams_.handle_datagram(m, p, now);
  broadcast_.take_datagram(m, p, now);
}

}  // namespace lanecast::engine
