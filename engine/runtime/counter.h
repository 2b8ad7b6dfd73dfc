// A statistics counter written by one polling core and read by any thread.
// Relaxed load + store instead of fetch_add: there is a single writer, so the
// increment needs no locked instruction, and readers still see whole values.
// add() forced inline: GCC 12 otherwise made it a call in the largest hot
// functions (the node's receive path), for a load, an add and a store.
#pragma once

#include <atomic>
#include <cstdint>

namespace lanecast::engine {

class Counter {
 public:
  [[gnu::always_inline]] void add(uint64_t n = 1) { v_.store(v_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed); }
  uint64_t get() const { return v_.load(std::memory_order_relaxed); }
  // A level rather than a count (a lane's current rate): written by the one
  // core that owns it, read by anyone.
  void set(uint64_t n) { v_.store(n, std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> v_{0};
};

}  // namespace lanecast::engine
