#include "drivers/fabric/fabric.h"

#include <rte_eth_ring.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <stdexcept>

#include "drivers/ethernet.h"

namespace lanecast::drivers {
namespace {

std::atomic<uint32_t> g_instances{0};
constexpr uint16_t kBurst = 32;

}  // namespace

Fabric::Fabric(const Options& o) : opts_(o), rng_(o.seed) {
  if (o.nodes == 0 || o.nodes > 65535) throw std::invalid_argument("fabric: nodes must be 1..65535");
  if (o.lanes == 0 || o.lanes > 16) throw std::invalid_argument("fabric: lanes must be 1..16");
  if (!(o.loss >= 0 && o.loss < 1)) throw std::invalid_argument("fabric: loss must be in [0, 1)");
  if (!(o.rate_mbit >= 0)) throw std::invalid_argument("fabric: rate must not be negative");
  if (o.queue_frames == 0) throw std::invalid_argument("fabric: queue_frames must be positive");
  if (o.ring_size < 64 || (o.ring_size & (o.ring_size - 1)))
    throw std::invalid_argument("fabric: ring_size must be a power of two >= 64");
  if (o.pool == nullptr) throw std::invalid_argument("fabric: mempool missing");
  loss_threshold_ = static_cast<uint64_t>(std::ldexp(o.loss, 64) >= 1.8446744073709552e19
                                               ? UINT64_MAX
                                               : std::ldexp(o.loss, 64));
  ns_per_byte_ = o.rate_mbit > 0 ? 8'000.0 / o.rate_mbit : 0;  // 8 bits / (Mbit/s) in ns
  tag_ = "fab" + std::to_string(g_instances.fetch_add(1));

  queues_.resize(size_t{o.nodes} * o.lanes);
  for (uint32_t n = 0; n < o.nodes; ++n) {
    std::vector<rte_ring*> rx(o.lanes), tx(o.lanes);
    for (uint16_t l = 0; l < o.lanes; ++l) {
      Queue& qu = q(n, l);
      const std::string base = tag_ + "_" + std::to_string(n) + "_" + std::to_string(l);
      qu.rx = rte_ring_create((base + "r").c_str(), o.ring_size, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
      qu.tx = rte_ring_create((base + "t").c_str(), o.ring_size, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
      if (qu.rx == nullptr || qu.tx == nullptr)
        throw std::runtime_error("fabric: cannot create rings (" + std::string(rte_strerror(rte_errno)) + ")");
      qu.out.slots.resize(o.queue_frames);
      rx[l] = qu.rx;
      tx[l] = qu.tx;
    }
    const std::string name = "net_" + tag_ + "_" + std::to_string(n);
    const int id = rte_eth_from_rings(name.c_str(), rx.data(), o.lanes, tx.data(), o.lanes, SOCKET_ID_ANY);
    if (id < 0) throw std::runtime_error("fabric: cannot create ring port " + name + ": " + rte_strerror(rte_errno));
    DpdkPortOptions po;
    po.lanes = o.lanes;
    po.max_frame_bytes = o.max_frame_bytes;
    po.rx_pool = o.pool;
    po.set_mac = true;
    po.mac = ethernet::node_mac(n, 0);
    ports_.push_back(std::make_unique<DpdkPort>(static_cast<uint16_t>(id), po));
  }
}

Fabric::~Fabric() {
  ports_.clear();  // stops and closes the ring ethdevs first
  rte_mbuf* m;
  for (Queue& qu : queues_) {
    for (uint32_t i = 0; i < qu.out.count; ++i)
      rte_pktmbuf_free(qu.out.slots[(qu.out.head + i) % qu.out.slots.size()].frame);
    for (rte_ring* r : {qu.rx, qu.tx}) {
      if (r == nullptr) continue;
      while (rte_ring_dequeue(r, reinterpret_cast<void**>(&m)) == 0) rte_pktmbuf_free(m);
      rte_ring_free(r);
    }
  }
}

PeerAddress Fabric::address(uint32_t node) const {
  if (node >= opts_.nodes) throw std::out_of_range("fabric: no node " + std::to_string(node));
  return ethernet::node_mac(node, 0);
}

uint64_t Fabric::serialise_ns(uint32_t bytes) const {
  return static_cast<uint64_t>((bytes + ethernet::kWireOverheadBytes) * ns_per_byte_);
}

uint32_t Fabric::poll(uint64_t now) {
  uint32_t work = 0;
  rte_mbuf* burst[kBurst];
  for (uint32_t n = 0; n < opts_.nodes; ++n) {
    for (uint16_t l = 0; l < opts_.lanes; ++l) {
      Queue& src = q(n, l);
      // The sender's uplink takes frames only as fast as its rate: what it
      // cannot take yet stays in the node's tx ring (back-pressure).
      if (src.uplink_busy_until > now) continue;
      const unsigned got = rte_ring_sc_dequeue_burst(src.tx, reinterpret_cast<void**>(burst), kBurst, nullptr);
      for (unsigned i = 0; i < got; ++i) {
        const uint64_t start = std::max(now, src.uplink_busy_until);
        src.uplink_busy_until = start + serialise_ns(burst[i]->pkt_len);
        forward(burst[i], n, l, src.uplink_busy_until);
      }
      work += got;
    }
  }
  for (uint32_t n = 0; n < opts_.nodes; ++n)
    for (uint16_t l = 0; l < opts_.lanes; ++l) work += deliver(n, l, now);
  return work;
}

void Fabric::forward(rte_mbuf* m, uint32_t src, uint16_t lane, uint64_t t_up) {
  if (m->data_len < ethernet::kHeaderBytes) {
    ++counters_.unknown_destination;
    rte_pktmbuf_free(m);
    return;
  }
  const auto* dst_mac = rte_pktmbuf_mtod(m, const uint8_t*);
  if (ethernet::is_group(dst_mac)) {
    // Every other node gets its own clone: receivers may adjust their frame.
    for (uint32_t d = 0; d < opts_.nodes; ++d) {
      if (d == src) continue;
      rte_mbuf* c = rte_pktmbuf_clone(m, opts_.pool);
      if (c == nullptr) {
        ++counters_.queue_drops;
        continue;
      }
      ++counters_.replicated;
      enqueue(c, d, lane, t_up);
    }
    rte_pktmbuf_free(m);
    return;
  }
  uint32_t dst;
  if (!ethernet::node_of_mac(dst_mac, &dst) || dst >= opts_.nodes) {
    ++counters_.unknown_destination;
    rte_pktmbuf_free(m);
    return;
  }
  enqueue(m, dst, lane, t_up);
}

void Fabric::enqueue(rte_mbuf* m, uint32_t dst, uint16_t lane, uint64_t t_up) {
  if (loss_threshold_ != 0 && rng_() < loss_threshold_) {
    ++counters_.lost;
    rte_pktmbuf_free(m);
    return;
  }
  DelayLine& out = q(dst, lane).out;
  if (out.count == out.slots.size()) {
    ++counters_.queue_drops;
    rte_pktmbuf_free(m);
    return;
  }
  // Store and forward: the output link starts once the frame is in and free.
  const uint64_t start = std::max(t_up, out.busy_until);
  out.busy_until = start + serialise_ns(m->pkt_len);
  out.slots[(out.head + out.count) % out.slots.size()] = Pending{m, out.busy_until + opts_.latency_ns};
  ++out.count;
}

uint32_t Fabric::deliver(uint32_t node, uint16_t lane, uint64_t now) {
  Queue& qu = q(node, lane);
  DelayLine& out = qu.out;
  uint32_t moved = 0;
  rte_mbuf* burst[kBurst];
  while (out.count > 0) {
    unsigned n = 0;
    while (n < kBurst && n < out.count) {
      const Pending& p = out.slots[(out.head + n) % out.slots.size()];
      if (p.arrival_ns > now) break;
      burst[n++] = p.frame;
    }
    if (n == 0) break;
    // A full receive ring keeps the rest here for the next poll.
    const unsigned put = rte_ring_sp_enqueue_burst(qu.rx, reinterpret_cast<void**>(burst), n, nullptr);
    for (unsigned i = 0; i < put; ++i) counters_.bytes += burst[i]->pkt_len;
    counters_.switched += put;
    out.head = static_cast<uint32_t>((out.head + put) % out.slots.size());
    out.count -= put;
    moved += put;
    if (put < n) break;
  }
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
