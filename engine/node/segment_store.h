// The running broadcast's segments held on this member: per segment, the
// buffer its bytes arrived in (or the root's copy), kept by reference for
// forwarding - the zero-copy path sends this very buffer to every child -
// with the CRC and seal it came with. The part of a node that owns those
// buffers: it refuses a second copy of a segment it holds, and frees what it
// holds when the broadcast ends or the node goes.
//
// Sized once for the group's largest message; nothing allocates afterwards.
#pragma once

#include <rte_mbuf.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/wire/wire.h"

namespace lanecast::engine {

class SegmentStore {
 public:
  struct Entry {
    rte_mbuf* payload = nullptr;  // the segment's bytes (shared by reference when sent)
    uint32_t crc = 0;             // its CRC (a group without a key)
    wire::Seal seal{};            // the root's payload seal (a group with a key), forwarded as it came
  };

  explicit SegmentStore(uint32_t max_segments) : entries_(max_segments) {}
  ~SegmentStore() { clear(); }
  SegmentStore(const SegmentStore&) = delete;
  SegmentStore& operator=(const SegmentStore&) = delete;

  uint32_t capacity() const { return static_cast<uint32_t>(entries_.size()); }
  // Whether segment `seg` (< capacity()) is held.
  bool held(uint32_t seg) const { return entries_[seg].payload != nullptr; }
  const Entry& operator[](uint32_t seg) const { return entries_[seg]; }
  // Takes the buffer of segment `seg` (< capacity()). A segment held
  // already keeps its first buffer: the second is freed, and false.
  bool keep(uint32_t seg, const Entry& e) {
    Entry& slot = entries_[seg];
    if (slot.payload != nullptr) {
      rte_pktmbuf_free(e.payload);
      return false;
    }
    slot = e;
    if (seg >= used_) used_ = seg + 1;
    return true;
  }
  // The broadcast ended: every buffer held goes back to its pool.
  void clear() {
    for (uint32_t i = 0; i < used_; ++i) {
      if (entries_[i].payload != nullptr) rte_pktmbuf_free(entries_[i].payload);
      entries_[i] = Entry{};
    }
    used_ = 0;
  }
  size_t bytes() const { return entries_.capacity() * sizeof(Entry); }

 private:
  std::vector<Entry> entries_;
  uint32_t used_ = 0;  // entries at or past this hold nothing
};

}  // namespace lanecast::engine
