// A member's part in one stream (Streams, streams.h, runs it on the polling core).
//
// Every member keeps the stream's batches in a ring of `window_batches`
// slots: a batch stays until every member below it in the stream's tree has
// delivered it (their reports say so), because until then a child may still
// need it sent again. The publisher forms batches only while a slot is free,
// so memory is bounded by the window everywhere and a slow member holds the
// publisher back instead of losing anything.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "algos/topology/stream_tree.h"
#include "engine/stream/aligned_bytes.h"
#include "engine/wire/wire.h"
#include "ipc/record_ring.h"

struct rte_mbuf;

namespace lanecast::engine::stream {

struct BatchSlot {
  rte_mbuf* payload = nullptr;  // null: empty
  uint64_t batch = 0;
  uint32_t len = 0;
  uint32_t crc = 0;
  uint32_t records = 0;
  uint64_t first_msg = 0;
  // Publisher: messages and bytes published, complete, by the end of it.
  uint64_t msgs_after = 0, bytes_after = 0;
  wire::Seal seal{};  // the publisher's payload seal (a group with a key), forwarded as it came
  // Publisher of a stream over multicast: when the batch went to the group
  // address (0: not yet), from which its repairs are timed.
  uint64_t multicast_ns = 0;
};

// What a publisher's application thread and the polling core share. Made by
// the application (Member::open_stream), owned by the node from then on.
struct PublisherShared {
  uint16_t index = 0;
  AlignedBytes ring_mem;
  RecordRingHeader* ring = nullptr;           // messages published, not yet in batches
  alignas(64) std::atomic<uint64_t> stable_msgs{0};   // delivered by every member
  std::atomic<uint64_t> stable_bytes{0};
  std::atomic<uint8_t> error{0};              // an OpError: the stream failed
  std::atomic<uint32_t> error_peer{UINT32_MAX};
};

// What the application may read of a stream while the core runs it
// (Member::streams()): relaxed atomics the core stores as it goes.
struct StreamMirror {
  std::atomic<uint32_t> publisher{0};
  std::atomic<uint32_t> index{0};
  std::atomic<uint64_t> delivered_msgs{0}, delivered_bytes{0};
  std::atomic<uint64_t> batches_held{0};     // received here, not yet let go
  std::atomic<uint32_t> slowest{UINT32_MAX}; // the member furthest behind below this one
  std::atomic<uint64_t> slowest_lag{0};      // batches it is behind what this member holds
  std::atomic<bool> evicted{false};          // this member left the stream for being slow
  std::atomic<uint32_t> evicted_members{0};  // members that left it so, as heard here
};

// The publisher's side of a stream (only the publisher's state has one):
// its ring of published messages and how far batches have cut into it.
struct PublisherCursor {
  PublisherShared* shared = nullptr;  // null: this member does not publish the stream
  RecordRing ring;
  uint32_t offset = 0;         // bytes of the ring's oldest message already in batches
  uint64_t next_batch = 0;
  uint64_t next_msg = 0;       // the sequence number of the next message to start (= messages complete)
  uint64_t bytes_done = 0;
};

// Where delivery stands: the batch and byte it reached, the next message's
// number, and what it waits for.
struct DeliveryPosition {
  static constexpr uint64_t kNoBatch = UINT64_MAX;
  uint64_t next = 0;           // the first batch not wholly delivered here
  uint32_t offset = 0;         // bytes of it delivered
  uint64_t seq = 0;            // the next message's sequence number
  // Delivery waits for this batch (a gap, or a message's later piece), or
  // kNoBatch; a gap with later batches held is watched (Receiving::watch_gap).
  uint64_t missing = kNoBatch;
  uint64_t gap = kNoBatch;     // the gap watched, since gap_since_ns
  uint64_t gap_since_ns = 0;
  // Slow members (StreamOptions::evict_after_ms): since when the delivery
  // ring has been full with nothing taken (0: it is not).
  uint64_t full_since_ns = 0;
};

// The children's books - what each child's reports said and what was sent
// to it - and what this member last told its parent of its subtree.
struct SubtreeBooks {
  static constexpr uint64_t kNoTime = UINT64_MAX;
  std::vector<uint64_t> child_mark;     // each child's subtree delivered every batch below
  std::vector<uint32_t> child_slowest;  // ... and the member of it furthest behind
  std::vector<uint64_t> child_sent;     // one past the highest batch sent to each child over its channel
  std::vector<uint64_t> child_lacks_since;  // its reports lack batches let go here, since (kNoTime: they do not)
  std::vector<uint64_t> child_held;  // each child holds every batch below (its reports say; 0: not said)
  std::vector<uint64_t> child_gap;   // ... and lacks the batches from there to here (0: none; its first gap)
  uint64_t mark = 0;           // min of ours and the children's
  uint32_t slowest = 0;        // the member of this subtree furthest behind
  uint64_t reported = 0;       // the mark last sent to the parent
  uint64_t reported_held = 0;  // the held_end last sent to the parent
  uint64_t last_report_ns = 0;

  // Child i holds every batch below this, as its reports said (delivered, or only held).
  uint64_t child_holds(uint32_t i) const { return std::max(child_mark[i], child_held[i]); }
};

// A publisher's stream over multicast (StreamOptions::multicast): the next
// batch to send to the group address, and per child the first batch not
// yet sent to it again over its channel (each batch is repaired at most
// once per child: the channel then delivers it).
struct MulticastRepair {
  uint64_t next = 0;
  std::vector<uint64_t> repair_next;
  uint64_t batch_gap_ns = 0;   // the least time between non-full batches (Publishing::multicast_may_form)
  uint64_t gap_checked_ns = 0;
};

struct StreamState {
  uint16_t slot = 0;           // its place in the node's table (owed items name it)
  algos::Rank publisher = 0;
  uint16_t index = 0;
  algos::StreamTree tree{1, 0, 0, 1};
  std::vector<BatchSlot> slots;  // window_batches, a power of two
  uint64_t mask = 0;
  uint64_t released = 0;       // batches below were let go here
  uint64_t received_end = 0;   // one past the highest batch held
  uint64_t held_end = 0;       // this member holds (or held) every batch below
  uint64_t last_activity_ns = 0;
  // Slow members (StreamOptions::evict_after_ms): whether this member left
  // the stream, the next member to tell, and who was heard to.
  bool evicted = false;
  uint32_t evict_notice_next = 0;
  std::vector<bool> heard_evicted;
  PublisherCursor pub;         // the publisher's side
  DeliveryPosition deliver;    // where delivery stands here
  SubtreeBooks books;          // the children's reports and this member's to its parent
  MulticastRepair mcast;       // over multicast: sending to the group address and repair
  StreamMirror mirror;         // what application threads may read of it

  BatchSlot& slot_of(uint64_t batch) { return slots[batch & mask]; }
  // Whether `batch` is held here (in its slot, not let go yet).
  bool holds(uint64_t batch) const {
    const BatchSlot& b = slots[batch & mask];
    return b.payload != nullptr && b.batch == batch;
  }
  // What child i can have had: the batches sent to it over its channel or
  // (a publisher's, over multicast) to the group address. Its reports may
  // not say more (Receiving::handle_stream_report).
  uint64_t sent_to_child(uint32_t i) const { return std::max(books.child_sent[i], mcast.next); }
  // The batch number a frame's low 32 bits mean, near what this member holds.
  uint64_t unwrap(uint32_t low) const {
    return deliver.next + static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(low - static_cast<uint32_t>(deliver.next))));
  }
};

}  // namespace lanecast::engine::stream
