#include "engine/node.h"

#include <rte_mbuf.h>
#include <rte_memcpy.h>
#include <rte_mempool.h>

#include <algorithm>
#include <stdexcept>

#include "engine/crc32c.h"

namespace lanecast::engine {

using algos::Rank;
using algos::SegmentIndex;

// The machine's view of this node: actions become owed sends, deliveries, a
// timer on the polling core's clock, and signals.
class Node::Sink final : public algos::Actions {
 public:
  Sink(Node& n, uint64_t now) : n_(n), now_(now) {}
  void send(Rank to, SegmentIndex seg, algos::Lane lane) override { n_.owe(to, seg, lane); }
  // Emulated multicast: the engine has no multicast on its ports yet (a separate
  // issue: a group address on the port, sent once, received unreliably). Until
  // then a multicast is an owed reliable send to every other member. A copy is
  // a datagram, so it may be dropped: it is, when owing it would leave a peer's
  // owed queue less room than one point-to-point send of every segment (what
  // the queue is sized for); the multicasting machine repairs its losses.
  void multicast(SegmentIndex seg, algos::Lane lane) override {
    // Every owed queue holds at least store_.size() (the most segments of a message).
    const uint64_t room = n_.store_.size(), reserve = n_.op_.plan->segments();
    for (Rank r = 0; r < n_.cfg_.nodes; ++r)
      if (r != n_.cfg_.rank && uint64_t{n_.peers_[r].owed.size()} + reserve + 1 <= room) n_.owe(r, seg, lane);
  }
  void deliver(SegmentIndex seg) override { n_.deliver(seg); }
  // Fires in the first poll() at or after now + after_ns.
  void arm(uint64_t after_ns, uint32_t tag) override {
    n_.arm(after_ns > UINT64_MAX - now_ ? UINT64_MAX - 1 : now_ + after_ns, tag);
  }
  // An owed header-only frame through the reliable channel (wire::kFlagSignal).
  void signal(Rank to, uint32_t tag) override { n_.owe_signal(to, tag); }

 private:
  Node& n_;
  uint64_t now_;  // the time of the event being handled
};

Node::Node(const NodeConfig& cfg, drivers::Port& port, const Pools& pools,
           std::vector<drivers::PeerAddress> peers)
    : cfg_(cfg), port_(port), pools_(pools), link_bytes_(port.link_header_bytes()) {
  if (cfg.nodes == 0 || cfg.rank >= cfg.nodes)
    throw std::invalid_argument("node: rank outside the group");
  if (peers.size() != cfg.nodes)
    throw std::invalid_argument("node: need one address per member");
  if (pools.payload == nullptr || pools.header == nullptr)
    throw std::invalid_argument("node: mempools missing");
  const uint64_t frame = uint64_t{link_bytes_} + wire::kDataHeaderBytes + cfg.segment_bytes;
  if (frame > port.max_frame_bytes())
    throw std::invalid_argument("segment of " + std::to_string(cfg.segment_bytes) +
                                " bytes makes " + std::to_string(frame) +
                                "-byte frames; port " + port.name() + " carries at most " +
                                std::to_string(port.max_frame_bytes()));
  const uint64_t max_segments =
      (cfg.max_message_bytes + cfg.segment_bytes - 1) / cfg.segment_bytes;
  if (max_segments > kSegmentMask) throw std::invalid_argument("node: message limit too large");
  if (cfg.lanes == 0 || cfg.lanes > kMaxLanes || cfg.lanes > port.lanes())
    throw std::invalid_argument("node: " + std::to_string(cfg.lanes) + " lanes requested, port " +
                                port.name() + " has " + std::to_string(port.lanes()) +
                                " (at most " + std::to_string(kMaxLanes) + ")");
  peers_.reserve(cfg.nodes);
  for (uint32_t r = 0; r < cfg.nodes; ++r) {
    // Our own entry is never used for traffic; keep it small.
    const uint32_t owed = r == cfg.rank ? 1 : static_cast<uint32_t>(max_segments);
    peers_.push_back(Peer{peers[r], reliable::SendChannel(cfg.window, cfg.rtt),
                          reliable::RecvChannel{}, SegmentFifo(owed), false});
  }
  ack_list_.reserve(cfg.nodes);
  send_order_.reserve(cfg.nodes);
  store_.resize(max_segments);
  stash_.resize(cfg.stash_frames);
}

Node::~Node() {
  release_store();
  for (size_t i = 0; i < stash_count_; ++i) rte_pktmbuf_free(stash_[i].frame);
  for (TxQueue& q : tx_)
    for (uint16_t i = 0; i < q.count; ++i) rte_pktmbuf_free(q.frames[i]);
}

// ---------------------------------------------------------------- poll loop

uint32_t Node::poll(uint64_t now) {
  uint32_t work = 0;
  if (!op_.active) try_start(now);

  rte_mbuf* rx[kBurst];
  for (uint16_t lane = 0; lane < port_.lanes(); ++lane) {
    const uint16_t n = port_.rx_burst(lane, rx, kBurst);
    for (uint16_t i = 0; i < n; ++i) handle_frame(rx[i], lane, now);
    work += n;
  }
  send_acks();
  if (op_.active && now >= op_.timer_at_ns) fire_timer(now);
  if (now >= next_scan_ns_) {
    scan(now);
    next_scan_ns_ = now + cfg_.scan_interval_ns;
  }
  if (op_.active) pump_sends(now);
  work += flush_tx();
  if (op_.active) check_done(now);
  return work;
}

uint64_t Node::next_wakeup_ns() const {
  if (tx_pending() || owed_total_ > 0 || pending_completion_ || submissions_.read_available() > 0) return 0;
  if (op_.active || unacked_total_ > 0) return std::min(next_scan_ns_, op_.timer_at_ns);
  return UINT64_MAX;
}

// ---------------------------------------------------------------- receive path

void Node::handle_frame(rte_mbuf* m, uint16_t lane, uint64_t now) {
  counters_.rx_frames.add();
  if (m->data_len < link_bytes_ || !port_.accepts(rte_pktmbuf_mtod(m, const uint8_t*))) {
    counters_.rx_not_for_us.add();
    rte_pktmbuf_free(m);
    return;
  }
  wire::Parsed p;
  const wire::Verdict v = wire::parse(m, link_bytes_, &p);
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
  if (p.src >= cfg_.nodes || p.src == cfg_.rank) {
    counters_.rx_bad_source.add();
    rte_pktmbuf_free(m);
    return;
  }
  if (p.type == wire::FrameType::Ack) {
    counters_.rx_acks.add();
    handle_ack(p.src, p.ack, now);
    rte_pktmbuf_free(m);
    return;
  }
  handle_data(m, p.src, lane, p.data, p.flags, p.payload_offset, now);
}

void Node::handle_ack(Rank src, const wire::AckBody& ack, uint64_t now) {
  Peer& peer = peers_[src];
  bool valid = false;
  const uint32_t newly = peer.tx.on_ack(ack.cum_ack, ack.sack, now, &valid);
  if (!valid) counters_.rx_bad_ack.add();
  unacked_total_ -= newly;
}

void Node::list_ack(Rank src) {
  Peer& peer = peers_[src];
  if (!peer.ack_listed) {
    peer.ack_listed = true;
    ack_list_.push_back(src);  // capacity reserved for every member
  }
}

bool Node::plan_agrees(const wire::DataBody& d) const {
  return d.root == op_.sub.root && d.total_len == op_.sub.size &&
         d.algo == static_cast<uint8_t>(op_.sub.algo) && d.segment_bytes == cfg_.segment_bytes;
}

// A data frame of the running broadcast, checked against its plan. A frame of
// a different broadcast (root, size, algorithm, segment size) fails it; one
// whose segment does not fit the plan is dropped and counted.
bool Node::fits_op(const wire::DataBody& d, Rank src, uint64_t now, bool signal) {
  if (!plan_agrees(d)) {
    finish(now, OpError::Mismatch, src);
    return false;
  }
  if (signal ? d.payload_len != 0 || d.segment > kSegmentMask : !segment_valid(d)) {
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

void Node::handle_data(rte_mbuf* m, Rank src, uint16_t lane, const wire::DataBody& d,
                       uint16_t flags, uint32_t payload_offset, uint64_t now) {
  Peer& peer = peers_[src];
  switch (peer.rx.check(d.seq)) {
    case reliable::RecvChannel::Check::Duplicate:
      counters_.rx_duplicate.add();
      peer.rx.request_ack();
      list_ack(src);
      rte_pktmbuf_free(m);
      return;
    case reliable::RecvChannel::Check::OutOfWindow:
      counters_.rx_out_of_window.add();
      rte_pktmbuf_free(m);
      return;
    case reliable::RecvChannel::Check::New:
      break;
  }
  if (flags & wire::kFlagAbandoned) {
    // Its broadcast failed at the sender: keep the channel in step, drop it.
    peer.rx.accept(d.seq);
    list_ack(src);
    counters_.rx_abandoned.add();
    rte_pktmbuf_free(m);
    return;
  }

  const bool signal = (flags & wire::kFlagSignal) != 0;
  const uint32_t current = op_.active ? op_.sub.op : next_op_;
  if (op_.active && d.op == current) {
    if (!fits_op(d, src, now, signal)) {
      rte_pktmbuf_free(m);
      return;
    }
    peer.rx.accept(d.seq);
    list_ack(src);
    if (signal) {
      rte_pktmbuf_free(m);
      accept_signal(src, d, now);
      return;
    }
    counters_.rx_data.add();
    accept_segment(detach_payload(m, payload_offset), src, lane, d, now);
    return;
  }
  if (d.op == next_op_ && (op_.active || !pending_completion_)) {
    // The next operation, before this member posted it: keep it (and ack it)
    // if there is room, so a fast root is not held back by a slow application.
    if (stash_count_ == stash_.size()) {
      counters_.rx_early_dropped.add();
      rte_pktmbuf_free(m);
      return;
    }
    peer.rx.accept(d.seq);
    list_ack(src);
    if (signal) rte_pktmbuf_free(m);
    stash_[stash_count_++] = Stashed{signal ? nullptr : detach_payload(m, payload_offset), src, lane, d, signal};
    counters_.rx_stashed.add();
    return;
  }
  if (reliable::seq_before(d.op, current)) {
    // Already finished here: take it off the sender's hands.
    peer.rx.accept(d.seq);
    list_ack(src);
    counters_.rx_stale_op.add();
    rte_pktmbuf_free(m);
    return;
  }
  counters_.rx_early_dropped.add();
  rte_pktmbuf_free(m);
}

// Leaves only the payload: a frame from a queue of ours is a header mbuf
// chained to a shared payload mbuf, which we take by reference; a frame from a
// NIC is one buffer, whose start we move past the headers. No byte is copied.
rte_mbuf* Node::detach_payload(rte_mbuf* m, uint32_t payload_offset) {
  if (m->data_len == payload_offset && m->next != nullptr) {
    rte_mbuf* payload = m->next;
    for (rte_mbuf* s = payload; s != nullptr; s = s->next) rte_mbuf_refcnt_update(s, 1);
    rte_pktmbuf_free(m);  // drops the header and our frame's hold on the payload
    return payload;
  }
  rte_pktmbuf_adj(m, static_cast<uint16_t>(payload_offset));
  return m;
}

void Node::accept_segment(rte_mbuf* payload, Rank src, uint16_t lane, const wire::DataBody& d,
                          uint64_t now) {
  op_.last_rx_ns = now;
  StoreEntry& e = store_[d.segment];
  if (e.payload != nullptr) {
    rte_pktmbuf_free(payload);  // a second copy of a segment (multicast + repair)
  } else {
    e.payload = payload;
    e.crc = d.payload_crc;
    // The root counts every segment as held from the start; a copy it
    // receives (scatter_allgather's ring) just saves it one copy-in.
    if (op_.sub.root != cfg_.rank) ++op_.held;
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

// ---------------------------------------------------------------- machine actions

void Node::owe(Rank to, SegmentIndex seg, algos::Lane lane) {
  if (to >= cfg_.nodes || to == cfg_.rank || seg >= op_.plan->segments() || lane >= cfg_.lanes ||
      !peers_[to].owed.push(seg | uint32_t{lane} << kLaneShift)) {
    internal_error_ = true;
    return;
  }
  ++owed_total_;
  if (!peers_[to].in_send_order) {
    peers_[to].in_send_order = true;
    send_order_.push_back(to);  // capacity reserved for every member
  }
}

void Node::owe_signal(Rank to, uint32_t tag) {
  if (to >= cfg_.nodes || to == cfg_.rank || tag > kSegmentMask || !peers_[to].owed.push(kSignalBit | tag)) {
    internal_error_ = true;
    return;
  }
  ++owed_total_;
  if (!peers_[to].in_send_order) {
    peers_[to].in_send_order = true;
    send_order_.push_back(to);
  }
}

// One timer per machine (algos/machine.h): a second before the first fired is
// the machine's error.
void Node::arm(uint64_t at_ns, uint32_t tag) {
  if (op_.timer_at_ns != kNoTimer) {
    internal_error_ = true;
    return;
  }
  op_.timer_at_ns = at_ns;
  op_.timer_tag = tag;
}

void Node::fire_timer(uint64_t now) {
  op_.timer_at_ns = kNoTimer;
  counters_.timers_fired.add();
  Sink sink(*this, now);
  op_.machine->on_timer(op_.timer_tag, sink);
}

void Node::deliver(SegmentIndex seg) {
  if (seg >= op_.plan->segments() || store_[seg].payload == nullptr || op_.sub.buffer == nullptr) {
    internal_error_ = true;
    return;
  }
  const algos::Segment s = op_.plan->segment(seg);
  std::byte* dst = op_.sub.buffer + s.offset;
  uint32_t left = s.length;
  for (const rte_mbuf* m = store_[seg].payload; m != nullptr && left > 0; m = m->next) {
    const uint32_t take = std::min<uint32_t>(left, m->data_len);
    rte_memcpy(dst, rte_pktmbuf_mtod(m, const void*), take);
    dst += take;
    left -= take;
  }
  counters_.delivered_bytes.add(s.length);
}

// ---------------------------------------------------------------- transmit path

// The root's one copy: a segment of the user's buffer into a frame buffer, made
// when the segment is first sent so the copy is spread over the pipeline.
bool Node::materialize(SegmentIndex seg) {
  if (op_.sub.root != cfg_.rank) return false;
  rte_mbuf* m = rte_pktmbuf_alloc(pools_.payload);
  if (m == nullptr) return false;
  const algos::Segment s = op_.plan->segment(seg);
  void* dst = rte_pktmbuf_append(m, static_cast<uint16_t>(s.length));
  if (dst == nullptr) {
    rte_pktmbuf_free(m);
    return false;
  }
  rte_memcpy(dst, op_.sub.buffer + s.offset, s.length);
  store_[seg] = StoreEntry{m, crc32c(0, dst, s.length)};
  counters_.root_copy_bytes.add(s.length);
  counters_.payload_mbufs_allocated.add();
  return true;
}

// A header mbuf holding the link header to `peer` and room for `header_bytes`
// of lanecast headers at *body.
rte_mbuf* Node::alloc_frame(Peer& peer, uint16_t header_bytes, uint8_t** body) {
  rte_mbuf* h = rte_pktmbuf_alloc(pools_.header);
  if (h == nullptr) {
    counters_.tx_alloc_failures.add();
    return nullptr;
  }
  auto* p = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(h, link_bytes_ + header_bytes));
  port_.write_link_header(p, peer.address);
  *body = p + link_bytes_;
  return h;
}

rte_mbuf* Node::build_data(Peer& peer, SegmentIndex seg, uint32_t seq, uint16_t lane) {
  uint8_t* at;
  rte_mbuf* h = alloc_frame(peer, wire::kDataHeaderBytes, &at);
  if (h == nullptr) return nullptr;
  const algos::Segment s = op_.plan->segment(seg);
  wire::DataBody b{};
  b.op = op_.sub.op;
  b.root = op_.sub.root;
  b.seq = seq;
  b.segment = seg;
  b.offset = s.offset;
  b.total_len = op_.sub.size;
  b.payload_len = s.length;
  b.payload_crc = store_[seg].crc;
  b.segment_bytes = cfg_.segment_bytes;
  b.algo = static_cast<uint8_t>(op_.sub.algo);
  b.lane = static_cast<uint8_t>(lane);
  wire::write_data(at, cfg_.group_id, cfg_.rank, b);

  // Zero-copy: the payload is shared by reference, never copied.
  rte_mbuf* payload = store_[seg].payload;
  for (rte_mbuf* m = payload; m != nullptr; m = m->next) rte_mbuf_refcnt_update(m, 1);
  h->next = payload;
  h->nb_segs = static_cast<uint16_t>(1 + payload->nb_segs);
  h->pkt_len += payload->pkt_len;
  return h;
}

// A signal: the data header of the running broadcast (so the receiver checks
// it against its plan like data), no payload, the tag in `segment`.
rte_mbuf* Node::build_signal(Peer& peer, uint32_t tag, uint32_t seq) {
  uint8_t* at;
  rte_mbuf* h = alloc_frame(peer, wire::kDataHeaderBytes, &at);
  if (h == nullptr) return nullptr;
  wire::DataBody b{};
  b.op = op_.sub.op;
  b.root = op_.sub.root;
  b.seq = seq;
  b.segment = tag;
  b.total_len = op_.sub.size;
  b.segment_bytes = cfg_.segment_bytes;
  b.algo = static_cast<uint8_t>(op_.sub.algo);
  wire::write_data(at, cfg_.group_id, cfg_.rank, b, wire::kFlagSignal);
  return h;
}

rte_mbuf* Node::build_ack(Peer& peer) {
  uint8_t* at;
  rte_mbuf* h = alloc_frame(peer, wire::kAckHeaderBytes, &at);
  if (h != nullptr) wire::write_ack(at, cfg_.group_id, cfg_.rank, peer.rx.make_ack());
  return h;
}

rte_mbuf* Node::build_abandoned(Peer& peer, uint32_t seq, const reliable::SendChannel::Entry& e) {
  uint8_t* at;
  rte_mbuf* h = alloc_frame(peer, wire::kDataHeaderBytes, &at);
  if (h == nullptr) return nullptr;
  wire::DataBody b{};
  b.op = e.op;
  b.seq = seq;
  b.segment = e.segment;
  b.segment_bytes = cfg_.segment_bytes;
  wire::write_data(at, cfg_.group_id, cfg_.rank, b, wire::kFlagAbandoned);
  return h;
}

void Node::send_acks() {
  for (size_t i = 0; i < ack_list_.size(); ++i) {
    Peer& peer = peers_[ack_list_[i]];
    if (!tx_room(0)) {
      // Keep the rest listed for the next iteration.
      ack_list_.erase(ack_list_.begin(), ack_list_.begin() + static_cast<long>(i));
      return;
    }
    rte_mbuf* a = build_ack(peer);
    if (a == nullptr) {
      ack_list_.erase(ack_list_.begin(), ack_list_.begin() + static_cast<long>(i));
      return;
    }
    peer.ack_listed = false;
    tx_push(0, a);  // acks go on lane 0
    counters_.tx_acks.add();
  }
  ack_list_.clear();
}

// Sends in the machine's order: the peer owed first is served first, as far
// as its windows allow, and later peers take what capacity is left. (Round
// robin over peers instead made a 64-node binomial broadcast of 8 MiB 3.5x
// slower in the simulator: every child finished last instead of one by one.)
void Node::pump_sends(uint64_t now) {
  for (size_t i = 0; i < send_order_.size() && owed_total_ > 0; ++i) {
    const Rank r = send_order_[i];
    Peer& peer = peers_[r];
    while (!peer.owed.empty() && peer.tx.window_open()) {
      const SegmentIndex seg = peer.owed.front() & kSegmentMask;
      const uint16_t lane = static_cast<uint16_t>(peer.owed.front() >> kLaneShift & kLaneMask);
      if (tx_[lane].count == kTxCap) return;  // full: the rest next iteration
      if (peer.owed.front() & kSignalBit) {
        rte_mbuf* m = build_signal(peer, seg, peer.tx.next_seq());
        if (m == nullptr) return;
        peer.tx.push(op_.sub.op, seg, now, lane, /*signal=*/true);
        peer.owed.pop();
        --owed_total_;
        ++unacked_total_;
        tx_push(lane, m);
        counters_.tx_signals.add();
        continue;
      }
      if (store_[seg].payload == nullptr && !materialize(seg)) {
        if (op_.sub.root != cfg_.rank) internal_error_ = true;  // sending what it lacks
        return;
      }
      rte_mbuf* m = build_data(peer, seg, peer.tx.next_seq(), lane);
      if (m == nullptr) return;
      peer.tx.push(op_.sub.op, seg, now, lane);
      peer.owed.pop();
      --owed_total_;
      ++unacked_total_;
      tx_push(lane, m);
      counters_.tx_data.add();
      counters_.tx_data_lane[lane].add();
    }
  }
}

uint32_t Node::flush_tx() {
  uint32_t sent_total = 0;
  for (uint16_t lane = 0; lane < cfg_.lanes; ++lane) {
    TxQueue& q = tx_[lane];
    if (q.count == 0) continue;
    const uint16_t sent = port_.tx_burst(lane, q.frames, q.count);
    // Never spin on a full queue: keep the tail for the next iteration.
    if (sent < q.count) std::copy(q.frames + sent, q.frames + q.count, q.frames);
    q.count = static_cast<uint16_t>(q.count - sent);
    sent_total += sent;
  }
  return sent_total;
}

bool Node::tx_room(uint16_t lane) {
  if (tx_[lane].count == kTxCap) flush_tx();
  return tx_[lane].count < kTxCap;
}

bool Node::tx_pending() const {
  for (const TxQueue& q : tx_)
    if (q.count > 0) return true;
  return false;
}

// ---------------------------------------------------------------- timers

void Node::scan(uint64_t now) {
  for (Rank r = 0; r < cfg_.nodes; ++r) {
    Peer& peer = peers_[r];
    if (peer.tx.idle()) continue;
    if (op_.active && now > peer.tx.last_progress_ns() + cfg_.peer_timeout_ns) {
      finish(now, OpError::PeerSilent, r);
      return;
    }
    peer.tx.collect_due(now, [&](uint32_t seq, const reliable::SendChannel::Entry& e) {
      if (!tx_room(e.lane)) return false;  // stays due for the next scan
      if (e.abandoned) {
        rte_mbuf* m = build_abandoned(peer, seq, e);
        if (m == nullptr) return false;
        tx_push(e.lane, m);
        counters_.tx_abandoned.add();
        return true;
      }
      // Only frames of the running broadcast are in flight unabandoned.
      if (!op_.active || e.op != op_.sub.op) return true;
      if (e.signal) {
        rte_mbuf* m = build_signal(peer, e.segment, seq);
        if (m == nullptr) return false;
        tx_push(e.lane, m);
        counters_.tx_retransmits.add();
        return true;
      }
      if (store_[e.segment].payload == nullptr) return true;
      rte_mbuf* m = build_data(peer, e.segment, seq, e.lane);
      if (m == nullptr) return false;
      tx_push(e.lane, m);
      counters_.tx_retransmits.add();
      return true;
    });
  }
  if (op_.active && !op_.machine->done() && now > op_.last_rx_ns + cfg_.peer_timeout_ns)
    finish(now, OpError::NoProgress, algos::kNoRank);
}

// ---------------------------------------------------------------- operations

void Node::try_start(uint64_t now) {
  if (pending_completion_) {
    if (!completions_.push(*pending_completion_)) return;
    pending_completion_.reset();
  }
  Submission sub;
  if (!submissions_.pop(sub)) return;

  algos::PlanParams pp;
  pp.nodes = cfg_.nodes;
  pp.lanes = cfg_.lanes;
  pp.root = sub.root;
  pp.message_bytes = sub.size;
  pp.segment_bytes = cfg_.segment_bytes;
  pp.op = sub.op;  // equal on every member: broadcasts are posted in the same order
  pp.algo = cfg_.algo_options;
  op_.sub = sub;
  op_.timer_at_ns = kNoTimer;
  try {
    op_.plan.emplace(pp);  // parameters were checked when the broadcast was posted
    op_.machine = algos::make_machine(sub.algo, *op_.plan, cfg_.rank);
  } catch (const std::exception&) {
    op_.plan.reset();
    CompletionRecord rec;
    rec.op = sub.op;
    rec.error = OpError::Internal;
    if (!completions_.push(rec)) pending_completion_ = rec;
    next_op_ = sub.op + 1;
    return;
  }
  op_.active = true;
  op_.held = sub.root == cfg_.rank ? op_.plan->segments() : 0;
  op_.start_ns = now;
  op_.last_rx_ns = now;
  next_op_ = sub.op + 1;
  internal_error_ = false;

  Sink sink(*this, now);
  op_.machine->start(sink);

  // Frames of this operation that arrived before it was posted.
  size_t keep = 0;
  for (size_t i = 0; i < stash_count_; ++i) {
    Stashed& s = stash_[i];
    if (s.data.op != sub.op) {
      if (reliable::seq_before(s.data.op, sub.op)) {
        counters_.rx_stale_op.add();
        rte_pktmbuf_free(s.frame);
      } else {
        stash_[keep++] = s;
      }
      continue;
    }
    if (!op_.active || !fits_op(s.data, s.src, now, s.signal)) {
      if (s.frame != nullptr) rte_pktmbuf_free(s.frame);
      continue;
    }
    if (s.signal) {
      accept_signal(s.src, s.data, now);
      continue;
    }
    counters_.rx_data.add();
    accept_segment(s.frame, s.src, s.lane, s.data, now);
  }
  stash_count_ = keep;
  if (op_.active) check_done(now);
}

void Node::check_done(uint64_t now) {
  if (internal_error_) {
    finish(now, OpError::Internal, algos::kNoRank);
    return;
  }
  if (owed_total_ == 0 && unacked_total_ == 0 && op_.machine->done())
    finish(now, OpError::None, algos::kNoRank);
}

void Node::finish(uint64_t now, OpError err, Rank peer) {
  CompletionRecord rec;
  rec.op = op_.sub.op;
  rec.error = err;
  rec.peer = peer;
  rec.start_ns = op_.start_ns;
  rec.finish_ns = now;
  rec.segments_held = op_.held;
  rec.segments_total = op_.plan ? op_.plan->segments() : 0;
  if (err == OpError::None) {
    counters_.ops_completed.add();
  } else {
    counters_.ops_failed.add();
    // What was owed is dropped; what is in flight is abandoned: re-sent empty
    // until acknowledged, so every channel stays in step for the next broadcast.
    for (auto& p : peers_) {
      p.owed.clear();
      p.tx.abandon_in_flight(now);
    }
    owed_total_ = 0;
  }
  release_store();
  for (Rank r : send_order_) peers_[r].in_send_order = false;
  send_order_.clear();
  op_.active = false;
  op_.timer_at_ns = kNoTimer;
  op_.machine.reset();
  if (!completions_.push(rec)) pending_completion_ = rec;
}

void Node::release_store() {
  if (!op_.plan) return;
  const uint32_t n = std::min<uint32_t>(op_.plan->segments(), static_cast<uint32_t>(store_.size()));
  for (uint32_t i = 0; i < n; ++i) {
    if (store_[i].payload != nullptr) rte_pktmbuf_free(store_[i].payload);
    store_[i] = StoreEntry{};
  }
}

}  // namespace lanecast::engine
