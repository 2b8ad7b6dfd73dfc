// The running broadcast's segments held on this member: per segment, the
// buffer its bytes arrived in (or the root's copy), kept by reference for
// forwarding - the zero-copy path sends this very buffer to every child -
// with the CRC and seal it came with. The part of a node that owns those
// buffers: it refuses a second copy of a segment it holds, and frees what it
// holds when the broadcast ends or the node goes.
//
// Sized once for the group's largest message; nothing allocates afterwards.
// A slot is the buffer and its CRC, 16 bytes, four to a cache line: every
// segment received or forwarded reads or writes its slot, and a broadcast
// walks the array once in order. Seals (a group with a key only) sit in their
// own array, so a group without one does not carry 32 bytes per segment
// through the cache.
#pragma once

#include <rte_mbuf.h>
#include <rte_prefetch.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/node/buffer_returns.h"
#include "engine/wire/wire.h"

namespace lanecast::engine {

class SegmentStore {
 public:
  struct Entry {
    rte_mbuf* payload = nullptr;  // the segment's bytes (shared by reference when sent)
    uint32_t crc = 0;             // its CRC (a group without a key)
    wire::Seal seal{};            // the root's payload seal (a group with a key), forwarded as it came
  };

  // `sealed`: a group with a key, whose segments carry seals.
  explicit SegmentStore(uint32_t max_segments, bool sealed = true)
      : slots_(max_segments), seals_(sealed ? max_segments : 0) {}
  ~SegmentStore() { clear(); }
  SegmentStore(const SegmentStore&) = delete;
  SegmentStore& operator=(const SegmentStore&) = delete;

  uint32_t capacity() const { return static_cast<uint32_t>(slots_.size()); }
  // Whether segment `seg` (< capacity()) is held.
  bool held(uint32_t seg) const { return slots_[seg].payload != nullptr; }
  rte_mbuf* payload(uint32_t seg) const { return slots_[seg].payload; }
  uint32_t crc(uint32_t seg) const { return slots_[seg].crc; }
  wire::Seal seal(uint32_t seg) const { return seals_.empty() ? wire::Seal{} : seals_[seg]; }
  Entry operator[](uint32_t seg) const { return Entry{payload(seg), crc(seg), seal(seg)}; }
  // Takes the buffer of segment `seg` (< capacity()). A segment held
  // already keeps its first buffer: the second is freed, and false.
  __rte_always_inline bool keep(uint32_t seg, const Entry& e) {
    Slot& slot = slots_[seg];
    if (slot.payload != nullptr) {
      rte_pktmbuf_free(e.payload);
      return false;
    }
    slot = Slot{e.payload, e.crc};
    if (!seals_.empty()) seals_[seg] = e.seal;
    if (seg >= used_) used_ = seg + 1;
    return true;
  }
  // The broadcast ended: every buffer held goes back to its pool. By then
  // the buffers' headers are long out of the cache, and a free reads each:
  // they are fetched a batch ahead and given back in bulk, so the misses
  // overlap instead of following one another. A one-segment buffer (all
  // but a split one) loses this store's reference inline and goes back
  // with others (buffer_returns.h); DPDK's bulk free costs twice the
  // instructions a buffer.
  // Each slot is emptied as its buffer goes, in the same walk: a second
  // walk to clear them would bring the whole array (16 bytes a segment, a
  // megabyte for 64-byte segments of 4 MiB) through the cache again.
  void clear() {
    constexpr uint32_t kAhead = 32;
    BufferReturns back;
    Slot* const slots = slots_.data();
    const uint32_t used = used_;
    for (uint32_t i = 0; i < used; ++i) {
      // A null slot ahead fetches nothing that matters (a prefetch never faults).
      if (i + kAhead < used) rte_prefetch0(slots[i + kAhead].payload);
      rte_mbuf* m = slots[i].payload;
      if (m == nullptr) continue;
      slots[i] = Slot{};
      if (m->nb_segs == 1) back.give_shared(m);
      else rte_pktmbuf_free(m);
    }
    back.flush();
    if (!seals_.empty()) std::fill(seals_.begin(), seals_.begin() + used, wire::Seal{});
    used_ = 0;
  }
  size_t bytes() const { return slots_.capacity() * sizeof(Slot) + seals_.capacity() * sizeof(wire::Seal); }

 private:
  struct Slot {
    rte_mbuf* payload = nullptr;
    uint32_t crc = 0;
  };

  std::vector<Slot> slots_;
  std::vector<wire::Seal> seals_;  // empty without a key
  uint32_t used_ = 0;  // slots at or past this hold nothing
};

}  // namespace lanecast::engine
