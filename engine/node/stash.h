// Frames of a later broadcast that arrived before this member posted it,
// the part of a node that owns them: a fast root is not held back by a slow
// application, nor a member that posted several broadcasts at once by roots
// ahead of it. Reliable frames are acknowledged when kept (their payloads
// were checked first: an acknowledged frame is never sent again), so the
// stash must keep them until their broadcast runs; multicast copies are
// kept only while it is less than half full (their senders repair).
//
// Bounded (sized once), counted, and it frees what it still holds when the
// node goes away.
#pragma once

#include <rte_mbuf.h>

#include <cstddef>
#include <vector>

#include "algos/machine.h"
#include "engine/reliable/seq.h"
#include "engine/runtime/counter.h"
#include "engine/wire/wire.h"

namespace lanecast::engine {

class Stash {
 public:
  struct Entry {
    rte_mbuf* frame;  // the payload; nullptr for a signal
    algos::Rank src;
    uint16_t lane;
    bool signal;
    bool datagram;    // a multicast copy (no channel: never acknowledged)
    wire::DataBody data;
    wire::Seal seal;  // its payload seal
  };
  struct Counters {
    Counter kept;   // frames of a later broadcast kept for it
    Counter stale;  // kept for a broadcast that ended here before they were used
  };

  Stash(size_t frames, Counters& counters) : entries_(frames), counters_(counters) {}
  ~Stash() {
    for (size_t i = 0; i < count_; ++i)
      if (entries_[i].frame != nullptr) rte_pktmbuf_free(entries_[i].frame);
  }
  Stash(const Stash&) = delete;
  Stash& operator=(const Stash&) = delete;

  bool full() const { return count_ == entries_.size(); }
  // Room for a multicast copy: below half, so reliable frames always find some.
  bool room_for_datagram() const { return count_ < entries_.size() / 2; }
  // Keeps `e` (its frame is the stash's now). Only when not full().
  void keep(const Entry& e) {
    entries_[count_++] = e;
    counters_.kept.add();
  }

  // Broadcast `op` starts: each entry of it goes to take(Entry&), which owns
  // its frame from then on, in the order they arrived; entries of earlier
  // broadcasts are freed and counted stale; later ones stay.
  template <class Take>
  void release(uint32_t op, Take&& take) {
    size_t keep = 0;
    for (size_t i = 0; i < count_; ++i) {
      Entry& e = entries_[i];
      if (e.data.op == op) {
        take(e);
      } else if (reliable::seq_before(e.data.op, op)) {
        counters_.stale.add();
        if (e.frame != nullptr) rte_pktmbuf_free(e.frame);
      } else {
        entries_[keep++] = e;
      }
    }
    count_ = keep;
  }

  size_t size() const { return count_; }
  size_t footprint_bytes() const { return entries_.capacity() * sizeof(Entry); }

 private:
  std::vector<Entry> entries_;
  size_t count_ = 0;
  Counters& counters_;
};

}  // namespace lanecast::engine
