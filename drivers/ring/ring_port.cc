#include "drivers/ring/ring_port.h"

#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <stdexcept>

#include "drivers/ethernet.h"
#include "drivers/wake.h"

namespace lanecast::drivers {

RingPort::RingPort(const Options& o)
    : max_frame_(o.max_frame_bytes), mac_(o.mac), name_(o.name), multicast_(o.multicast) {
  if (o.lanes == 0 || o.lanes > 16) throw std::invalid_argument("ring port: lanes must be 1..16");
  if (o.ring_size < 64 || (o.ring_size & (o.ring_size - 1)))
    throw std::invalid_argument("ring port: ring size must be a power of two of at least 64");
  if (o.mac.len != 6) throw std::invalid_argument("ring port: a MAC has 6 bytes");
  if (o.max_frame_bytes < ethernet::kMinFrameBytes)
    throw std::invalid_argument("ring port: max frame below Ethernet's 60 bytes");
  lanes_.resize(o.lanes);
  try {
    for (uint16_t l = 0; l < o.lanes; ++l) {
      const std::string base = o.name + "_" + std::to_string(l);
      // Single producer, single consumer: each ring has one core on each end.
      lanes_[l].rx = rte_ring_create((base + "r").c_str(), o.ring_size, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
      if (lanes_[l].rx != nullptr)
        lanes_[l].tx = rte_ring_create((base + "t").c_str(), o.ring_size, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
      if (lanes_[l].rx == nullptr || lanes_[l].tx == nullptr)
        throw std::runtime_error("ring port: cannot create ring " + base + " of " + std::to_string(o.ring_size) +
                                 ": " + rte_strerror(rte_errno));
    }
  } catch (...) {
    release();
    throw;
  }
}

RingPort::~RingPort() { release(); }

void RingPort::release() {
  rte_mbuf* m;
  for (Lane& l : lanes_) {
    for (rte_ring* r : {l.rx, l.tx}) {
      if (r == nullptr) continue;
      while (rte_ring_sc_dequeue(r, reinterpret_cast<void**>(&m)) == 0) rte_pktmbuf_free(m);
      rte_ring_free(r);
    }
    l.rx = l.tx = nullptr;
  }
}

uint16_t RingPort::rx_burst(uint16_t lane, rte_mbuf** frames, uint16_t max) {
  const unsigned n = rte_ring_sc_dequeue_burst(lanes_[lane].rx, reinterpret_cast<void**>(frames), max, nullptr);
  if (n) rx_frames_.add(n);
  return static_cast<uint16_t>(n);
}

uint16_t RingPort::tx_burst(uint16_t lane, rte_mbuf** frames, uint16_t count) {
  const unsigned n = rte_ring_sp_enqueue_burst(lanes_[lane].tx, reinterpret_cast<void**>(frames), count, nullptr);
  if (n) {
    tx_frames_.add(n);
    if (tx_waker_ != nullptr) tx_waker_->notify();
  }
  if (n < count) tx_full_.add(count - n);
  return static_cast<uint16_t>(n);
}

void RingPort::notify_rx() {
  if (rx_waker_ != nullptr) rx_waker_->notify();
}

PortCaps RingPort::caps() const {
  PortCaps c;
  c.tx_chained = true;  // the ring carries mbuf pointers: any chain
  c.multicast = multicast_;
  c.rx_wakeup = true;
  return c;
}

PortStats RingPort::stats() const {
  PortStats s;
  s.rx_frames = rx_frames_.get();
  s.tx_frames = tx_frames_.get();
  s.tx_full = tx_full_.get();
  return s;
}

uint16_t RingPort::link_header_bytes() const { return ethernet::kHeaderBytes; }

void RingPort::write_link_header(uint8_t* at, const PeerAddress& dst) const { ethernet::write_header(at, dst, mac_); }

bool RingPort::accepts(const uint8_t* hdr) const { return groups_.accepts(hdr, mac_); }

bool RingPort::is_from(const uint8_t* hdr, const PeerAddress& peer) const { return ethernet::is_from(hdr, peer); }

PeerAddress RingPort::group_address(const GroupAddressSeed& seed, uint16_t lane) const { return ethernet::group_mac(seed, lane); }

std::string RingPort::join_group(uint16_t lane, const PeerAddress& group) {
  if (!multicast_) return name_ + ": the switch behind it does not copy group frames";
  if (lane >= lanes_.size() || group.len != 6 || !ethernet::is_group(group.bytes))
    return name_ + ": " + format_address(group) + " is not a group address of a lane it has";
  groups_.add(group);
  return "";
}

void RingPort::leave_group(uint16_t lane, const PeerAddress& group) {
  (void)lane;
  groups_.remove(group);
}

}  // namespace lanecast::drivers
