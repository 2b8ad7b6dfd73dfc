// A member's streams by slot (stream_table.h).
#include "engine/stream/stream_table.h"

#include <rte_mbuf.h>

namespace lanecast::engine::stream {

StreamTable::StreamTable(const Shape& shape)
    : shape_(shape),
      slots_(size_t{shape.nodes} * shape.streams_per_member),
      mirrors_(std::make_unique<std::atomic<const StreamMirror*>[]>(slots_.size())) {
  open_.reserve(slots_.size());
}

StreamState& StreamTable::open(uint16_t slot, algos::Rank publisher, uint16_t index, uint64_t now, bool* opened) {
  if (opened != nullptr) *opened = false;
  if (StreamState* s = slots_[slot].get()) return *s;
  auto state = std::make_unique<StreamState>();
  StreamState& s = *state;
  s.slot = slot;
  s.publisher = publisher;
  s.index = index;
  s.tree = algos::StreamTree(shape_.nodes, publisher, shape_.rank, shape_.fanout);
  s.slots.assign(shape_.window_batches, BatchSlot{});
  s.mask = shape_.window_batches - 1;
  s.books.child_mark.assign(s.tree.children(), 0);
  s.books.child_sent.assign(s.tree.children(), 0);
  s.books.child_lacks_since.assign(s.tree.children(), SubtreeBooks::kNoTime);
  s.mcast.repair_next.assign(s.tree.children(), 0);
  s.books.child_held.assign(s.tree.children(), 0);
  s.books.child_gap.assign(s.tree.children(), 0);
  s.books.child_slowest.assign(s.tree.children(), algos::kNoRank);
  for (uint32_t i = 0; i < s.tree.children(); ++i) s.books.child_slowest[i] = s.tree.child(i);
  s.books.slowest = shape_.rank;
  s.mirror.publisher.store(publisher, std::memory_order_relaxed);
  s.mirror.index.store(index, std::memory_order_relaxed);
  s.books.last_report_ns = s.last_activity_ns = now;
  slots_[slot] = std::move(state);
  open_.push_back(slot);
  mirrors_[slot].store(&s.mirror, std::memory_order_release);
  if (opened != nullptr) *opened = true;
  return s;
}

void StreamTable::free_batches() {
  for (const uint16_t slot : open_)
    for (BatchSlot& b : slots_[slot]->slots)
      if (b.payload != nullptr) {
        rte_pktmbuf_free(b.payload);
        b.payload = nullptr;
      }
}

}  // namespace lanecast::engine::stream
