// The multicast MACs an Ethernet port has joined: its receive filter for
// group frames. A NIC keeps such a table in hardware; a port in promiscuous
// mode (af_packet, the fabric's ring ports) sees every group frame on its
// segment and keeps this one in software, so frames of groups it has not
// joined - other jobs on the same bridge - are refused at the port and
// counted by the engine (rx_not_ours), never handed to a group.
//
// Joins and leaves come from the control path (one thread at a time, under
// a lock); contains() runs on the polling core that receives, lock-free: a
// slot is one relaxed atomic word holding the MAC and a valid bit, so a
// reader sees either the old or the new address, never half of one.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "drivers/ethernet.h"
#include "drivers/port.h"

namespace lanecast::drivers {

class GroupFilter {
 public:
  static constexpr int kSlots = 32;  // groups x lanes one port is a member of

  // One more join of `mac` (a group address). True when the address is new
  // to the filter (the caller programs the device); false when it was there
  // already. Throws std::length_error when every slot is taken.
  bool add(const PeerAddress& mac) {
    std::lock_guard<std::mutex> g(mu_);
    const uint64_t w = word(mac.bytes);
    int free_slot = -1;
    for (int i = 0; i < kSlots; ++i) {
      if (slots_[i].load(std::memory_order_relaxed) == w) {
        ++refs_[i];
        return false;
      }
      if (refs_[i] == 0 && free_slot < 0) free_slot = i;
    }
    if (free_slot < 0) throw std::length_error("port: more than 32 multicast groups joined");
    refs_[free_slot] = 1;
    slots_[free_slot].store(w, std::memory_order_release);
    return true;
  }
  // One leave. True when it was the last join of `mac` (the caller
  // unprograms the device); false when others remain or it was not joined.
  bool remove(const PeerAddress& mac) {
    std::lock_guard<std::mutex> g(mu_);
    const uint64_t w = word(mac.bytes);
    for (int i = 0; i < kSlots; ++i)
      if (refs_[i] > 0 && slots_[i].load(std::memory_order_relaxed) == w) {
        if (--refs_[i] > 0) return false;
        slots_[i].store(0, std::memory_order_release);
        return true;
      }
    return false;
  }
  // Hot path: whether frames to `mac` (6 bytes) are for this port.
  bool contains(const uint8_t* mac) const {
    const uint64_t w = word(mac);
    for (const auto& s : slots_)
      if (s.load(std::memory_order_relaxed) == w) return true;
    return false;
  }
  // Every address joined, once each (control path).
  std::vector<PeerAddress> list() const {
    std::lock_guard<std::mutex> g(mu_);
    std::vector<PeerAddress> out;
    for (int i = 0; i < kSlots; ++i)
      if (refs_[i] > 0) {
        const uint64_t w = slots_[i].load(std::memory_order_relaxed);
        uint8_t m[6];
        for (int b = 0; b < 6; ++b) m[b] = static_cast<uint8_t>(w >> (8 * (5 - b)));
        out.push_back(ethernet::to_peer(m));
      }
    return out;
  }
  // The port's software filter: lanecast's EtherType, addressed to `self`,
  // to the broadcast address (bootstrap hellos) or to a group joined here.
  bool accepts(const uint8_t* hdr, const PeerAddress& self) const {
    if (!ethernet::is_lanecast(hdr)) return false;
    if (!ethernet::is_group(hdr)) return std::memcmp(hdr, self.bytes, 6) == 0;
    return ethernet::is_broadcast(hdr) || contains(hdr);
  }
  // accepts() over a burst (Port::accepted): bit i for hdrs[i].
  uint64_t accepts_each(const uint8_t* const* hdrs, uint16_t n, const PeerAddress& self) const {
    uint64_t ok = 0;
    for (uint16_t i = 0; i < n; ++i) ok |= uint64_t{accepts(hdrs[i], self)} << i;
    return ok;
  }

 private:
  // The MAC in the low 48 bits and a valid bit above: never 0.
  static uint64_t word(const uint8_t* m) {
    uint64_t w = uint64_t{1} << 48;
    for (int b = 0; b < 6; ++b) w |= uint64_t{m[b]} << (8 * (5 - b));
    return w;
  }

  mutable std::mutex mu_;
  std::atomic<uint64_t> slots_[kSlots] = {};
  uint32_t refs_[kSlots] = {};
};

}  // namespace lanecast::drivers
