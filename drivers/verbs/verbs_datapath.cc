// VerbsPort: the datapath - receives posted into mbufs in bursts, completions
// read in bursts, frames sent as scatter lists (or inline when small) with
// one signalled completion per burst. No allocation, no lock, no system
// call: the adapter's queues are written in user space (rdma-core's
// provider), and the mbufs come from pools registered at set-up. The one
// exception is a queue pair in the error state, brought back on the lane's
// own core (recover(): rare, counted).
#include <rte_mbuf.h>

#include <algorithm>
#include <cstring>

#include "drivers/verbs/verbs_lane.h"
#include "drivers/wake.h"

namespace lanecast::drivers::verbs {

namespace {

// Rewrites the GRH area of a received datagram, extended 8 bytes into the
// headroom (`area` points there), as an RxHeader: the sender's GID from the
// GRH (IB and RoCE v2 over IPv6 lay it out as IPv6 does; RoCE v2 over IPv4
// puts an IPv4 header in the area's last 20 bytes), its LID and QPN from the
// completion, and the destination the seal covers - the group the GRH names,
// or this member (`self`).
void write_rx_header(uint8_t* area, const ibv_wc& wc, bool ipv4, const DestinationBinding& self) {
  const uint8_t* grh = area + (kRxHeaderBytes - kGrhBytes);
  RxHeader h{};
  h.binding = self;
  if (wc.wc_flags & IBV_WC_GRH) {
    if (ipv4 && (grh[20] >> 4) == 4) {
      h.flags |= RxHeader::kHasGrh;
      h.gid[10] = h.gid[11] = 0xff;
      std::memcpy(h.gid + 12, grh + 32, 4);
      if ((grh[36] & 0xf0) == 0xe0) {
        h.flags |= RxHeader::kToGroup;
        uint8_t group[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        std::memcpy(group + 12, grh + 36, 4);
        h.binding = binding_of(group, kMulticastQpn);
      }
    } else if (!ipv4 && (grh[0] >> 4) == 6) {
      h.flags |= RxHeader::kHasGrh;
      std::memcpy(h.gid, grh + 8, 16);
      if (grh[24] == 0xff) {
        h.flags |= RxHeader::kToGroup;
        h.binding = binding_of(grh + 24, kMulticastQpn);
      }
    }
  }
  h.slid[0] = static_cast<uint8_t>(wc.slid >> 8);
  h.slid[1] = static_cast<uint8_t>(wc.slid);
  h.src_qpn[0] = static_cast<uint8_t>(wc.src_qp >> 16);
  h.src_qpn[1] = static_cast<uint8_t>(wc.src_qp >> 8);
  h.src_qpn[2] = static_cast<uint8_t>(wc.src_qp);
  std::memcpy(area, &h, sizeof h);
}

}  // namespace

uint16_t VerbsPort::rx_burst(uint16_t lane, rte_mbuf** frames, uint16_t max) {
  Lane& l = *lanes_[lane];
  if (l.broken) recover(l);
  reap_sends(l);
  const int n = v_.poll_cq(l.recv_cq, std::min<int>(max, kBurst), l.wc);
  if (n < 0) {  // the CQ overran: its QP is unusable until recovered
    l.c.rx_errors.add();
    l.broken = true;
    return 0;
  }
  const bool ipv4 = caps_.roce && is_ipv4_mapped(self_.gid);
  const DestinationBinding self = binding_of(self_.gid.raw, self_.qpn[0]);
  uint16_t out = 0;
  for (int i = 0; i < n; ++i) {
    const ibv_wc& wc = l.wc[i];
    rte_mbuf* m = l.rq[l.rq_head];
    l.rq_head = (l.rq_head + 1) % static_cast<uint32_t>(l.rq.size());
    --l.rq_posted;
    if (wc.wr_id != reinterpret_cast<uintptr_t>(m)) {  // completions out of order: the ring is wrong
      l.c.rx_errors.add();
      l.broken = true;
    }
    if (wc.status != IBV_WC_SUCCESS || wc.byte_len < kGrhBytes || wc.byte_len > rx_room_) {
      if (wc.status != IBV_WC_WR_FLUSH_ERR) l.c.rx_errors.add();
      if (wc.status != IBV_WC_SUCCESS && wc.status != IBV_WC_LOC_LEN_ERR) l.broken = true;
      rte_pktmbuf_free(m);
      continue;
    }
    m->data_len = static_cast<uint16_t>(wc.byte_len);
    m->pkt_len = wc.byte_len;
    auto* area = reinterpret_cast<uint8_t*>(rte_pktmbuf_prepend(m, kRxHeaderBytes - kGrhBytes));  // headroom: 128
    write_rx_header(area, wc, ipv4, self);
    frames[out++] = m;
  }
  l.c.rx_completed.add(static_cast<uint64_t>(n));
  l.c.rx_frames.add(out);
  // Refill once the completion queue is drained (then rq_posted is what the
  // adapter holds, exactly) or a quarter of the queue is left: a backlog
  // read burst after burst is refilled in one go, and the counters below
  // see how far it ran down.
  if (n < std::min<int>(max, kBurst) || l.rq_posted <= l.rq.size() / 4) replenish(l);
  return out;
}

// Fills the receive queue, posting in bursts of kBurst (one doorbell each).
// Before that, counts how close it came to running dry, once per approach:
// with no receive posted (every one we posted has completed) the adapter
// drops what arrives.
void VerbsPort::replenish(Lane& l) {
  const auto depth = static_cast<uint32_t>(l.rq.size());
  const bool low = l.rq_posted < depth / 8, empty = l.rq_posted == 0;
  if (low && !l.rq_was_low) l.c.rq_low.add();
  if (empty && !l.rq_was_empty) l.c.rq_empty.add();
  l.rq_was_low = low, l.rq_was_empty = empty;
  while (depth - l.rq_posted >= kBurst || (l.rq_posted <= depth / 4 && l.rq_posted < depth)) {
    const uint32_t want = std::min<uint32_t>(kBurst, depth - l.rq_posted);
    rte_mbuf* ms[kBurst];
    uint32_t got = want;
    if (rte_pktmbuf_alloc_bulk(o_.rx_pool, ms, want) != 0) {  // nearly empty: take what is left
      l.c.rx_no_buffer.add();
      got = 0;
      while (got < want && (ms[got] = rte_pktmbuf_alloc(o_.rx_pool)) != nullptr) ++got;
      if (got == 0) return;
    }
    for (uint32_t i = 0; i < got; ++i) {
      l.recv_sge[i].addr = rte_pktmbuf_mtod(ms[i], uintptr_t);
      l.recv_sge[i].length = rx_room_;
      l.recv_sge[i].lkey = lkey_of(ms[i]->pool, l.recv_sge[i].addr);
      l.recv_wr[i] = ibv_recv_wr{};
      l.recv_wr[i].wr_id = reinterpret_cast<uintptr_t>(ms[i]);
      l.recv_wr[i].sg_list = &l.recv_sge[i];
      l.recv_wr[i].num_sge = 1;
      l.recv_wr[i].next = i + 1 < got ? &l.recv_wr[i + 1] : nullptr;
    }
    ibv_recv_wr* bad = nullptr;
    const int e = v_.post_recv(l.qp, l.recv_wr, &bad);
    const uint32_t posted = e == 0 ? got : static_cast<uint32_t>(bad - l.recv_wr);
    for (uint32_t i = 0; i < posted; ++i) l.rq[(l.rq_head + l.rq_posted + i) % depth] = ms[i];
    l.rq_posted += posted;
    l.c.rx_posted.add(posted);
    for (uint32_t i = posted; i < got; ++i) rte_pktmbuf_free(ms[i]);
    if (e != 0) {
      l.c.rx_errors.add();
      return;
    }
    if (got < want) return;
  }
}

// Reads send completions: a signalled completion for send `seq` retires
// every send up to it (their frames are freed: the adapter has read them).
void VerbsPort::reap_sends(Lane& l) {
  if (l.sq_retired == l.sq_next) return;
  const int n = v_.poll_cq(l.send_cq, kBurst, l.wc);
  if (n < 0) {
    l.c.tx_errors.add();
    l.broken = true;
    return;
  }
  for (int i = 0; i < n; ++i) {
    const ibv_wc& wc = l.wc[i];
    if (wc.status != IBV_WC_SUCCESS) {
      l.c.tx_errors.add();
      if (wc.status != IBV_WC_LOC_LEN_ERR) l.broken = true;
    }
    const uint64_t upto = std::min<uint64_t>(wc.wr_id + 1, l.sq_next);
    for (; l.sq_retired < upto; ++l.sq_retired) {
      rte_mbuf*& slot = l.sq[l.sq_retired % l.sq.size()];
      if (slot != nullptr) rte_pktmbuf_free(slot);
      slot = nullptr;
    }
  }
  l.c.tx_completions.add(static_cast<uint64_t>(n));
}

uint16_t VerbsPort::tx_burst(uint16_t lane, rte_mbuf** frames, uint16_t count) {
  Lane& l = *lanes_[lane];
  if (l.broken) recover(l);
  reap_sends(l);
  const auto sq_size = static_cast<uint32_t>(l.sq.size());
  const uint16_t take = static_cast<uint16_t>(std::min<uint32_t>({count, kBurst, sq_size - l.sq_in_flight()}));
  if (take < count) l.c.tx_full.add(count - take);
  rte_mbuf* inlined[kBurst];
  uint16_t w = 0, n_inline = 0;
  uint32_t sge = 0;
  for (uint16_t i = 0; i < take; ++i) {
    rte_mbuf* m = frames[i];
    TxHeader h;
    std::memcpy(&h, rte_pktmbuf_mtod(m, const void*), sizeof h);
    if (h.magic != TxHeader::kMagic || h.dest >= dests_.size() || m->data_len < sizeof h) {
      l.c.tx_unresolved.add();
      rte_pktmbuf_free(m);
      continue;
    }
    const uint32_t bytes = m->pkt_len - static_cast<uint32_t>(sizeof h);
    if (m->nb_segs > l.max_send_sge || bytes > max_datagram_) {
      (m->nb_segs > l.max_send_sge ? l.c.tx_too_many_segments : l.c.tx_errors).add();
      rte_pktmbuf_free(m);
      continue;
    }
    const Destination& d = dests_[h.dest];
    ibv_send_wr& wr = l.send_wr[w];
    wr = ibv_send_wr{};
    wr.wr_id = l.sq_next + w;
    wr.opcode = IBV_WR_SEND;
    wr.sg_list = &l.send_sge[sge];
    size_t skip = sizeof h;  // the link header is not sent
    for (rte_mbuf* s = m; s != nullptr; s = s->next) {
      if (s->data_len <= skip) {
        skip -= s->data_len;
        continue;
      }
      ibv_sge& g = l.send_sge[sge + static_cast<uint32_t>(wr.num_sge++)];
      g.addr = rte_pktmbuf_mtod_offset(s, uintptr_t, skip);
      g.length = s->data_len - static_cast<uint32_t>(skip);
      g.lkey = lkey_of(s->pool, rte_pktmbuf_mtod(s, uintptr_t));
      skip = 0;
    }
    sge += static_cast<uint32_t>(wr.num_sge);
    const bool inline_it = bytes <= l.max_inline;
    if (inline_it) {  // copied into the work request: the frame is free once posted
      wr.send_flags |= IBV_SEND_INLINE;
      inlined[n_inline++] = m;
      l.c.tx_inline.add();
    }
    l.sq[(l.sq_next + w) % sq_size] = inline_it ? nullptr : m;
    if (++l.since_signal >= sq_size / 4) wr.send_flags |= IBV_SEND_SIGNALED;
    if (wr.send_flags & IBV_SEND_SIGNALED) l.since_signal = 0;
    wr.wr.ud.ah = d.ah;
    wr.wr.ud.remote_qpn = d.group ? kMulticastQpn : d.qpn[lane];
    wr.wr.ud.remote_qkey = o_.qkey;
    if (w > 0) l.send_wr[w - 1].next = &wr;
    ++w;
  }
  if (w > 0) {
    // The burst's last send is signalled: its completion retires the burst,
    // and no frame waits for a later burst to be freed.
    l.send_wr[w - 1].send_flags |= IBV_SEND_SIGNALED;
    l.since_signal = 0;
    ibv_send_wr* bad = nullptr;
    const int e = v_.post_send(l.qp, l.send_wr, &bad);
    const uint16_t posted = e == 0 ? w : static_cast<uint16_t>(bad - l.send_wr);
    for (uint16_t i = posted; i < w; ++i) {  // refused: taken all the same, freed and counted
      rte_mbuf*& slot = l.sq[(l.sq_next + i) % sq_size];
      if (slot != nullptr) rte_pktmbuf_free(slot);
      slot = nullptr;
      l.c.tx_errors.add();
    }
    // Inline frames refused by post_send are in `inlined` too: freed once, here.
    for (uint16_t i = 0; i < n_inline; ++i) rte_pktmbuf_free(inlined[i]);
    l.sq_next += posted;
    l.c.tx_posted.add(posted);
    l.c.tx_frames.add(posted);
  }
  return take;
}

// A queue pair in the error state (a completion said so) comes back: its
// flushed receives and unsent frames are freed, it is reset and taken to
// RTS again, and its receives are posted anew.
void VerbsPort::recover(Lane& l) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RESET;
  v_.modify_qp(l.qp, &a, IBV_QP_STATE);
  int n;
  while ((n = v_.poll_cq(l.recv_cq, kBurst, l.wc)) > 0) (void)n;  // flushed: the ring below frees their buffers
  while ((n = v_.poll_cq(l.send_cq, kBurst, l.wc)) > 0) (void)n;
  flush_receives(l);
  for (; l.sq_retired < l.sq_next; ++l.sq_retired) {
    rte_mbuf*& slot = l.sq[l.sq_retired % l.sq.size()];
    if (slot != nullptr) rte_pktmbuf_free(slot);
    slot = nullptr;
  }
  l.since_signal = 0;
  try {
    to_rts(l);
  } catch (const std::exception&) {
    return;  // still broken: tried again on the next call, counted as errors meanwhile
  }
  l.broken = false;
  l.c.qp_recovered.add();
  replenish(l);
}

void VerbsPort::flush_receives(Lane& l) {
  for (; l.rq_posted > 0; --l.rq_posted) {
    rte_pktmbuf_free(l.rq[l.rq_head]);
    l.rq_head = (l.rq_head + 1) % static_cast<uint32_t>(l.rq.size());
  }
}

// Sleeping until a datagram arrives: the receive CQs report their next
// completion on the completion channel, whose descriptor the core's waker
// watches. Armed just before the core's last look (Poller::idle_wait), so a
// completion before the arm is found by that look and one after it wakes
// the core. The control of the core's own lanes: no other thread touches
// the channel.
void VerbsPort::attach_waker(Waker* w) {
  if (comp_channel_ == nullptr) return;
  if (waker_ != nullptr) waker_->remove_fd(comp_channel_->fd);
  waker_ = w;
  if (w != nullptr) w->add_fd(comp_channel_->fd);
}

void VerbsPort::detach_waker() {
  if (waker_ != nullptr && comp_channel_ != nullptr) waker_->remove_fd(comp_channel_->fd);
  waker_ = nullptr;
}

void VerbsPort::arm_wakeup() {
  if (comp_channel_ == nullptr) return;
  for (auto& l : lanes_) v_.req_notify_cq(l->recv_cq, 0);
}

void VerbsPort::disarm_wakeup() { drain_cq_events(); }

// Reads and acknowledges every event the channel holds (its descriptor is
// non-blocking: none left is EAGAIN), so it is quiet until the next arm.
void VerbsPort::drain_cq_events() {
  if (comp_channel_ == nullptr) return;
  ibv_cq* cq = nullptr;
  void* context = nullptr;
  while (v_.get_cq_event(comp_channel_, &cq, &context) == 0) {
    v_.ack_cq_events(cq, 1);
    wakeup_events_.store(wakeup_events_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
}

}  // namespace lanecast::drivers::verbs
