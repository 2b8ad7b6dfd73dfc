// Every stream a member may take part in, by slot: publisher x
// streams_per_member + index, a slot for each stream any member may
// publish. The part of a node that owns the streams' states: it makes a
// stream's state on its first frame (its window, its place in the tree),
// keeps the slots in the order they opened (what the core walks each
// turn), publishes each state's counters to application threads, and frees
// the batches still held when the node goes.
//
// Threads: mirror() is any thread's; everything else is the polling core's.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "algos/machine.h"
#include "engine/stream/stream_state.h"

namespace lanecast::engine::stream {

class StreamTable {
 public:
  struct Shape {
    uint32_t nodes = 1;
    algos::Rank rank = 0;       // this member
    uint32_t streams_per_member = 1;
    uint32_t fanout = 2;        // each member's children in a stream's tree
    uint32_t window_batches = 16;  // a power of two
  };

  explicit StreamTable(const Shape& shape);
  ~StreamTable() { free_batches(); }
  StreamTable(const StreamTable&) = delete;
  StreamTable& operator=(const StreamTable&) = delete;

  size_t size() const { return slots_.size(); }
  // The slot of `publisher`'s stream `index`; none when the group has no
  // such stream (a rank outside it, an index past streams_per_member).
  std::optional<uint16_t> slot(algos::Rank publisher, uint32_t index) const {
    if (publisher >= shape_.nodes || index >= shape_.streams_per_member) return std::nullopt;
    return static_cast<uint16_t>(publisher * shape_.streams_per_member + index);
  }
  // The stream in `slot` (< size()), or null while it has not opened here.
  StreamState* at(uint16_t slot) { return slots_[slot].get(); }
  const StreamState* at(uint16_t slot) const { return slots_[slot].get(); }
  StreamState* find(algos::Rank publisher, uint32_t index) {
    const std::optional<uint16_t> s = slot(publisher, index);
    return s ? at(*s) : nullptr;
  }
  // The stream of `slot` (from slot()), made now if it has not opened yet:
  // the only allocation a stream makes. `opened` says whether it was made.
  StreamState& open(uint16_t slot, algos::Rank publisher, uint16_t index, uint64_t now, bool* opened = nullptr);
  // The slots that opened, in the order they did.
  const std::vector<uint16_t>& open_slots() const { return open_; }
  bool any_open() const { return !open_.empty(); }
  // Slot i's counters (i < size()), or null while it has not opened.
  const StreamMirror* mirror(size_t i) const { return mirrors_[i].load(std::memory_order_acquire); }
  // Every batch still held, back to its pool.
  void free_batches();
  size_t bytes() const { return slots_.size() * (sizeof(slots_[0]) + sizeof(mirrors_[0])); }

 private:
  Shape shape_;
  std::vector<std::unique_ptr<StreamState>> slots_;
  std::vector<uint16_t> open_;
  std::unique_ptr<std::atomic<const StreamMirror*>[]> mirrors_;
};

}  // namespace lanecast::engine::stream
