// What a node keeps of each peer of its group: the frames to and from it
// (both lanes: data and streams' batches sent, sent again, accepted), and
// when its last frame of this epoch came. The polling core writes them;
// application threads read the counters and the latest time of all
// (last_heard_ns), the running broadcast the times when it fails for want
// of progress (quietest_peer).
//
// Sized at construction; every call is inline and allocates nothing.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>

#include "algos/types.h"
#include "engine/runtime/counter.h"

namespace lanecast::engine {

class PeerBooks {
 public:
  struct Counters {
    Counter tx_data, tx_retransmits, rx_data;
  };

  explicit PeerBooks(uint32_t peers)
      : counters_(std::make_unique<Counters[]>(peers)), heard_ns_(std::make_unique<uint64_t[]>(peers)) {}

  Counters& counters(algos::Rank r) { return counters_[r]; }
  const Counters& counters(algos::Rank r) const { return counters_[r]; }
  // A frame of this group from `r` came at `now`.
  void heard(algos::Rank r, uint64_t now) {
    heard_ns_[r] = std::max<uint64_t>(now, 1);
    last_heard_ns_.store(heard_ns_[r], std::memory_order_relaxed);
  }
  // When each peer's last frame came (0: never).
  const uint64_t* heard_ns() const { return heard_ns_.get(); }
  // The latest of them (0: none yet); any thread.
  uint64_t last_heard_ns() const { return last_heard_ns_.load(std::memory_order_relaxed); }

 private:
  std::unique_ptr<Counters[]> counters_;
  std::unique_ptr<uint64_t[]> heard_ns_;
  std::atomic<uint64_t> last_heard_ns_{0};
};

}  // namespace lanecast::engine
