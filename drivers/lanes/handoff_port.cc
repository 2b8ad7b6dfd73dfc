#include "drivers/lanes/handoff_port.h"

#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <stdexcept>

#include "drivers/wake.h"

namespace lanecast::drivers {
namespace {

rte_ring* make_ring(const std::string& name, uint32_t frames) {
  rte_ring* r = rte_ring_create(name.c_str(), frames, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
  if (r == nullptr)
    throw std::runtime_error("lane handoff: cannot make ring " + name + ": " + rte_strerror(rte_errno));
  return r;
}

void free_all(rte_ring* r) {
  rte_mbuf* m[HandoffPort::kBurst];
  for (unsigned n; (n = rte_ring_sc_dequeue_burst(r, reinterpret_cast<void**>(m), HandoffPort::kBurst, nullptr)) > 0;)
    rte_pktmbuf_free_bulk(m, n);
}

}  // namespace

HandoffPort::HandoffPort(std::unique_ptr<Port> inner, const std::string& name, uint32_t ring_frames)
    : inner_(std::move(inner)) {
  if (inner_ == nullptr || inner_->lanes() != 1) throw std::invalid_argument("lane handoff: needs a port of one lane");
  rx_ring_ = make_ring(name + "_rx", ring_frames);
  try {
    tx_ring_ = make_ring(name + "_tx", ring_frames);
  } catch (...) {
    rte_ring_free(rx_ring_);
    throw;
  }
}

HandoffPort::~HandoffPort() {
  free_all(rx_ring_);
  free_all(tx_ring_);
  rte_pktmbuf_free_bulk(unsent_ + unsent_head_, unsent_count_);
  rte_ring_free(rx_ring_);
  rte_ring_free(tx_ring_);
}

uint16_t HandoffPort::rx_burst(uint16_t, rte_mbuf** frames, uint16_t max) {
  return static_cast<uint16_t>(rte_ring_sc_dequeue_burst(rx_ring_, reinterpret_cast<void**>(frames), max, nullptr));
}

uint16_t HandoffPort::tx_burst(uint16_t, rte_mbuf** frames, uint16_t count) {
  const auto n = static_cast<uint16_t>(
      rte_ring_sp_enqueue_burst(tx_ring_, reinterpret_cast<void* const*>(frames), count, nullptr));
  if (n < count) tx_ring_full_.fetch_add(count - n, std::memory_order_relaxed);
  if (n > 0)
    if (Waker* w = lane_waker_.load(std::memory_order_acquire)) w->notify();
  return n;
}

PortStats HandoffPort::stats() const {
  PortStats s = inner_->stats();
  s.rx_missed += rx_ring_full();
  s.tx_full += tx_ring_full();
  return s;
}

uint32_t HandoffPort::lane_rx() {
  rte_mbuf* m[kBurst];
  const uint16_t got = inner_->rx_burst(0, m, kBurst);
  if (got == 0) return 0;
  const unsigned in = rte_ring_sp_enqueue_burst(rx_ring_, reinterpret_cast<void* const*>(m), got, nullptr);
  if (in < got) {  // the member's core is behind: drop, as a full NIC ring would
    rx_ring_full_.fetch_add(got - in, std::memory_order_relaxed);
    rte_pktmbuf_free_bulk(m + in, got - in);
  }
  if (in > 0)
    if (Waker* w = member_waker_.load(std::memory_order_acquire)) w->notify();
  return got;
}

uint32_t HandoffPort::lane_tx() {
  uint32_t moved = 0;
  if (unsent_count_ == 0) {
    unsent_head_ = 0;
    unsent_count_ = static_cast<uint16_t>(
        rte_ring_sc_dequeue_burst(tx_ring_, reinterpret_cast<void**>(unsent_), kBurst, nullptr));
  }
  if (unsent_count_ > 0) {
    const uint16_t sent = inner_->tx_burst(0, unsent_ + unsent_head_, unsent_count_);
    unsent_head_ = static_cast<uint16_t>(unsent_head_ + sent);
    unsent_count_ = static_cast<uint16_t>(unsent_count_ - sent);
    moved += sent;
  }
  return moved;
}

uint64_t HandoffPort::lane_next_due_ns() const {
  if (unsent_count_ > 0 || !rte_ring_empty(tx_ring_)) return 0;
  return inner_->held_until_ns();
}

bool HandoffPort::lane_arm() {
  inner_->arm_wakeup();
  return inner_->caps().rx_wakeup;
}

void HandoffPort::attach_lane_waker(Waker* w) {
  inner_->attach_waker(w);
  lane_waker_.store(w, std::memory_order_release);
}

void HandoffPort::detach_lane_waker() {
  lane_waker_.store(nullptr, std::memory_order_release);
  inner_->detach_waker();
}

}  // namespace lanecast::drivers
