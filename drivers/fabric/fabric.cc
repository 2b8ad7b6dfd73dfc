// The in-process fabric: set-up and teardown of rings and ring ports, and the
// switch's poll loop. See fabric.h for the model.
#include "drivers/fabric/fabric.h"

#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>
#include <rte_ring.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "drivers/prefetch.h"
#include "drivers/ethernet.h"
#include "drivers/wake.h"

namespace lanecast::drivers {
namespace {

std::atomic<uint32_t> g_instances{0};
constexpr uint16_t kBurst = 32;
constexpr uint32_t kMaxQueueFrames = 1u << 24;
constexpr uint32_t kMaxRingSize = 1u << 20;

void validate(const Fabric::Options& o) {
  auto bad = [](const std::string& what) { throw std::invalid_argument("fabric: " + what); };
  if (o.nodes == 0 || o.nodes > ethernet::kMaxNodes)
    bad("nodes must be 1..65536 (got " + std::to_string(o.nodes) + ")");
  if (o.lanes == 0 || o.lanes > 16) bad("lanes must be 1..16 (got " + std::to_string(o.lanes) + ")");
  if (!(o.loss >= 0 && o.loss < 1)) bad("loss must be in [0, 1) (got " + std::to_string(o.loss) + ")");
  if (!(o.rate_mbit >= 0) || std::isinf(o.rate_mbit))
    bad("rate must be a finite number of Mbit/s >= 0, 0 = unlimited (got " + std::to_string(o.rate_mbit) + ")");
  if (o.queue_frames == 0 || o.queue_frames > kMaxQueueFrames)
    bad("queue_frames must be 1.." + std::to_string(kMaxQueueFrames) + " (got " + std::to_string(o.queue_frames) + ")");
  if (o.ring_size < 64 || o.ring_size > kMaxRingSize || (o.ring_size & (o.ring_size - 1)))
    bad("ring_size must be a power of two in 64.." + std::to_string(kMaxRingSize) + " (got " +
        std::to_string(o.ring_size) + ")");
  if (o.max_frame_bytes < ethernet::kMinFrameBytes)
    bad("max_frame_bytes must be at least 60 (got " + std::to_string(o.max_frame_bytes) + ")");
  if (o.pool == nullptr) bad("mempool missing");
  if (!o.latency_matrix_ns.empty() && o.latency_matrix_ns.size() != uint64_t{o.nodes} * o.nodes)
    bad("latency matrix has " + std::to_string(o.latency_matrix_ns.size()) + " entries for " +
        std::to_string(o.nodes) + " nodes (needs nodes x nodes)");
}

// Header buffers fetched ahead for a multicast's copies, and how much of
// each (a copied header is about 100 bytes).
constexpr uint32_t kReplicasAhead = 8;
constexpr uint32_t kReplicaHeaderBytes = 128;

}  // namespace

Fabric::Fabric(const Options& o) : opts_(o), rng_(o.seed) {
  validate(o);
  const double t = std::ldexp(o.loss, 64);
  loss_threshold_ = t >= 18446744073709551615.0 ? UINT64_MAX : static_cast<uint64_t>(t);
  ns_per_byte_ = o.rate_mbit > 0 ? 8'000.0 / o.rate_mbit : 0;  // 8 bits / (Mbit/s), in ns
  const uint16_t room = rte_pktmbuf_data_room_size(o.pool);  // validate(): a pool is given
  replica_room_ = room > RTE_PKTMBUF_HEADROOM ? room - RTE_PKTMBUF_HEADROOM : 0;
  tag_ = "fab" + std::to_string(g_instances.fetch_add(1));
  try {
    build();
  } catch (...) {
    release();
    throw;
  }
}

Fabric::~Fabric() { release(); }

void Fabric::build() {
  const Options& o = opts_;
  queues_.resize(size_t{o.nodes} * o.lanes);
  ports_.reserve(o.nodes);
  for (uint32_t n = 0; n < o.nodes; ++n) {
    RingPort::Options po;
    po.lanes = o.lanes;
    po.ring_size = o.ring_size;
    po.max_frame_bytes = o.max_frame_bytes;
    po.mac = ethernet::node_mac(n, 0);
    po.name = tag_ + "_" + std::to_string(n);
    po.multicast = true;  // forward() floods group addresses
    ports_.push_back(std::make_unique<RingPort>(po));
    for (uint16_t l = 0; l < o.lanes; ++l) {
      Queue& qu = q(n, l);
      qu.rx = ports_.back()->rx_ring(l);
      qu.tx = ports_.back()->tx_ring(l);
      qu.node = n;
      qu.out.slots.resize(o.queue_frames);
    }
  }
}

void Fabric::release() {
  for (Queue& qu : queues_) {
    for (uint32_t i = 0; i < qu.out.count; ++i)
      rte_pktmbuf_free(qu.out.slots[(qu.out.head + i) % qu.out.slots.size()].frame);
    qu.out.count = 0;
  }
  queues_.clear();
  ports_.clear();  // frees what is left in the rings, and the rings
}

void Fabric::set_waker(Waker* w) {
  for (auto& p : ports_) p->set_tx_waker(w);
}

PeerAddress Fabric::address(uint32_t node) const {
  if (node >= opts_.nodes) throw std::out_of_range("fabric: no node " + std::to_string(node));
  return ethernet::node_mac(node, 0);
}

Fabric::Counters Fabric::counters() const {
  return Counters{c_.switched.get(),   c_.bytes.get(),      c_.lost.get(),      c_.queue_drops.get(),
                  c_.unknown_destination.get(), c_.replicated.get(), c_.not_joined.get(), c_.malformed.get(),
                  c_.pool_drops.get(), c_.deepest_queue.get()};
}

uint64_t Fabric::serialise_ns(uint32_t bytes) const {
  return static_cast<uint64_t>((bytes + ethernet::kWireOverheadBytes) * ns_per_byte_);
}

uint32_t Fabric::poll(uint64_t now) {
  uint32_t work = 0;
  rte_mbuf* burst[kBurst];
  const uint32_t nodes = opts_.nodes;
  for (uint32_t k = 0; k < nodes; ++k) {
    const uint32_t n = first_ + k < nodes ? first_ + k : first_ + k - nodes;
    for (uint16_t l = 0; l < opts_.lanes; ++l) {
      Queue& src = q(n, l);
      // The uplink takes frames only as fast as its rate: what it cannot take
      // yet stays in the node's tx ring (back-pressure on the sender).
      if (src.uplink_busy_until > now) continue;
      const unsigned got = rte_ring_sc_dequeue_burst(src.tx, reinterpret_cast<void**>(burst), kBurst, nullptr);
      // A frame waits in the tx ring until the uplink takes it (a full ring
      // is a millisecond at 10 Gbit/s), so its descriptor's lines are cold:
      // the length (first line) and the chain (second) of the whole burst
      // are fetched at once rather than waited for frame by frame.
      for (unsigned i = 0; i < got; ++i) {
        rte_prefetch0(burst[i]);
        rte_prefetch0(&burst[i]->next);
      }
      for (unsigned i = 0; i < got; ++i) {
        const uint64_t start = std::max(now, src.uplink_busy_until);
        src.uplink_busy_until = start + serialise_ns(burst[i]->pkt_len);
        forward(burst[i], n, l, src.uplink_busy_until);
      }
      work += got;
    }
  }
  first_ = first_ + 1 < nodes ? first_ + 1 : 0;
  for (Queue& qu : queues_) work += deliver(qu, now);
  return work;
}

// A frame fully received by the switch at t_up: route it.
void Fabric::forward(rte_mbuf* m, uint32_t src, uint16_t lane, uint64_t t_up) {
  if (m->data_len < ethernet::kHeaderBytes || m->pkt_len > opts_.max_frame_bytes) {
    c_.malformed.add();
    rte_pktmbuf_free(m);
    return;
  }
  const auto* dst_mac = rte_pktmbuf_mtod(m, const uint8_t*);
  if (ethernet::is_group(dst_mac)) {
    // Copy to every port that joined. The first receiver takes the frame
    // itself, the others a copy made from it (nothing is delivered before
    // this poll's forward phase ends, so the original is untouched while we
    // copy it).
    // The header buffers the copies will take (drivers/prefetch.h):
    // made one after another, each waited for its buffer's lines in turn.
    prefetch_next_allocs(opts_.pool, std::min(opts_.nodes - 1, kReplicasAhead), kReplicaHeaderBytes);
    bool placed = false;
    uint16_t shared = 0;  // payload references the copies took (replicate)
    rte_mbuf* const payload = m->next;
    for (uint32_t d = 0; d < opts_.nodes; ++d) {
      if (d == src) continue;
      if (!ports_[d]->joined(dst_mac)) {
        c_.not_joined.add();
        continue;
      }
      if (!admit(d, lane)) continue;
      rte_mbuf* copy = m;
      if (placed) {
        copy = replicate(m, &shared);
        if (copy == nullptr) {
          c_.pool_drops.add();
          continue;
        }
        c_.replicated.add();
        if (shared == INT16_MAX) {  // the most one update adds
          rte_mbuf_refcnt_update(payload, static_cast<int16_t>(shared));
          shared = 0;
        }
      }
      placed = true;
      push(copy, src, d, lane, t_up);
    }
    // Nothing is delivered before this poll's forward phase ends, so the
    // payload cannot go back to its pool before its count is raised here.
    if (shared > 0) rte_mbuf_refcnt_update(payload, static_cast<int16_t>(shared));
    if (!placed) rte_pktmbuf_free(m);
    return;
  }
  uint32_t dst;
  if (!ethernet::node_of_mac(dst_mac, &dst) || dst >= opts_.nodes) {
    c_.unknown_destination.add();
    rte_pktmbuf_free(m);
    return;
  }
  if (admit(dst, lane)) {
    push(m, src, dst, lane, t_up);
  } else {
    rte_pktmbuf_free(m);
  }
}

// One more copy of a multicast frame. A frame as the engine sends it - a
// header buffer chained to a payload buffer - gets a header buffer of its
// own, the header's bytes copied (about 100), and the same payload buffer:
// what a receiver keeps of a frame is its payload
// (engine/node/payload_reads.h), so every member keeps the root's buffer, as
// a unicast frame's receiver does, instead of an indirect buffer from the
// header pool per member and segment until the broadcast ends (with 8
// members, 16 MiB took 72 000 of the pool's 20 000: the copies after the
// first were dropped, counted in pool_drops, and repaired one by one).
// `*shared` counts the payload references the caller owes (one locked add
// for all of a frame's copies: forward()). Any other frame is cloned
// (rte_pktmbuf_clone: an indirect buffer per segment, references taken).
// Receivers do not write into a payload they share: a fault port corrupts a
// copy of it (drivers/fault).
rte_mbuf* Fabric::replicate(rte_mbuf* m, uint16_t* shared) {
  // A header that does not fit the pool's buffers (never, from the engine's
  // builders) is cloned, as is any other shape of frame.
  if (m->nb_segs != 2 || m->data_len > replica_room_) return rte_pktmbuf_clone(m, opts_.pool);
  rte_mbuf* h = rte_pktmbuf_alloc(opts_.pool);
  if (h == nullptr) return nullptr;
  std::memcpy(rte_pktmbuf_mtod(h, void*), rte_pktmbuf_mtod(m, const void*), m->data_len);
  h->data_len = m->data_len;
  h->pkt_len = m->pkt_len;
  h->nb_segs = 2;
  h->port = m->port;
  h->next = m->next;
  ++*shared;
  return h;
}

// Whether the link to (dst, lane) takes one more frame: not lost, room left.
bool Fabric::admit(uint32_t dst, uint16_t lane) {
  if (loss_threshold_ != 0 && rng_() < loss_threshold_) {
    c_.lost.add();
    return false;
  }
  const DelayLine& out = q(dst, lane).out;
  if (out.count == out.slots.size()) {
    c_.queue_drops.add();
    return false;
  }
  return true;
}

void Fabric::push(rte_mbuf* m, uint32_t src, uint32_t dst, uint16_t lane, uint64_t t_up) {
  DelayLine& out = q(dst, lane).out;
  // Store and forward: the downlink starts once the frame is in and the link is free.
  const uint64_t start = std::max(t_up, out.busy_until);
  out.busy_until = start + serialise_ns(m->pkt_len);
  uint32_t tail = out.head + out.count;
  if (tail >= out.slots.size()) tail -= static_cast<uint32_t>(out.slots.size());
  out.last_arrival = std::max(out.last_arrival, out.busy_until + latency(src, dst));
  out.slots[tail] = Pending{m, out.last_arrival};
  if (++out.count > c_.deepest_queue.get()) c_.deepest_queue.add(1);
}

// Moves what has arrived by `now` into the receiver's rx ring, in order; what
// the ring cannot take waits for the next poll.
uint32_t Fabric::deliver(Queue& qu, uint64_t now) {
  DelayLine& out = qu.out;
  const uint32_t size = static_cast<uint32_t>(out.slots.size());
  uint32_t moved = 0;
  rte_mbuf* burst[kBurst];
  while (out.count > 0) {
    unsigned n = 0;
    uint32_t at = out.head;
    while (n < kBurst && n < out.count) {
      const Pending& p = out.slots[at];
      if (p.arrival_ns > now) break;
      burst[n++] = p.frame;
      if (++at == size) at = 0;
    }
    if (n == 0) break;
    const unsigned put = rte_ring_sp_enqueue_burst(qu.rx, reinterpret_cast<void**>(burst), n, nullptr);
    uint64_t bytes = 0;
    for (unsigned i = 0; i < put; ++i) bytes += burst[i]->pkt_len;
    c_.bytes.add(bytes);
    c_.switched.add(put);
    out.head = (out.head + put) % size;
    out.count -= put;
    moved += put;
    if (put < n) break;
  }
  if (moved > 0) ports_[qu.node]->notify_rx();
  return moved;
}

uint64_t Fabric::next_event_ns() const {
  uint64_t next = UINT64_MAX;
  for (const Queue& qu : queues_) {
    if (rte_ring_count(qu.tx) > 0) next = std::min(next, qu.uplink_busy_until);
    if (qu.out.count > 0) next = std::min(next, qu.out.slots[qu.out.head].arrival_ns);
  }
  return next;
}

}  // namespace lanecast::drivers
