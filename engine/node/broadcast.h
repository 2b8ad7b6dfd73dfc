// The running broadcast, the part of a node that owns it: the submissions
// the application posted, the broadcast that runs (its plan, its machine
// built in the machine arena, its timer), the segments held here
// (SegmentStore), its multicasts not yet sent (MulticastQueue), a later
// broadcast's early frames (Stash), and which broadcast runs next. It starts
// broadcasts, takes their frames, turns the machine's actions into owed work
// and multicasts, builds their data and signal frames, and finishes them,
// publishing each outcome to the completion box.
//
// The node hands it frames by kind and asks it for frames to send (direct
// calls); it reaches the node through BroadcastHost (broadcast_host.h) and
// builds frames with FrameBuilder. Everything here runs on the polling core
// but submit(), which an application thread calls.
#pragma once

#include <boost/lockfree/spsc_queue.hpp>

#include <cstdint>
#include <optional>
#include <vector>

#include "algos/arena.h"
#include "algos/machine.h"
#include "drivers/port.h"
#include "engine/node/broadcast_host.h"
#include "engine/node/completion_box.h"
#include "engine/node/fail_stop.h"
#include "engine/node/frame_builder.h"
#include "engine/node/multicast_queue.h"
#include "engine/node/node_config.h"
#include "engine/node/node_counters.h"
#include "engine/node/op_types.h"
#include "engine/node/segment_store.h"
#include "engine/node/stash.h"
#include "engine/node/tx_lanes.h"
#include "engine/reliable/seq.h"
#include "engine/wire/wire.h"

struct rte_mbuf;
struct rte_mempool;

namespace lanecast::engine {
namespace auth {
class FrameAuth;
}

class Broadcast {
 public:
  // What it shares with the node: the node's parts it uses directly.
  struct Parts {
    BroadcastHost& host;
    FrameBuilder& frames;
    NodeCounters& counters;
    CompletionBox& box;
    FailStop& fail_stop;
    const drivers::PortCaps& caps;                         // caps.multicast: a group address
    const std::vector<drivers::PeerAddress>& addrs;        // per rank
    const std::vector<drivers::PeerAddress>& group_addrs;  // per lane, when the port multicasts
    rte_mempool* payload_pool;
  };
  // The arena is sized for the group's largest message; `max_segments` is
  // its segments.
  Broadcast(const NodeConfig& cfg, Parts parts, uint32_t max_segments);
  Broadcast(const Broadcast&) = delete;
  Broadcast& operator=(const Broadcast&) = delete;

  // Set-up: this member's seals (null without a key) and when each peer's
  // last frame came (read when a broadcast fails for want of progress).
  void connect(auth::FrameAuth* auth, const uint64_t* heard_ns);

  // Application side: false when the queue is full.
  bool submit(const Submission& s) { return submissions_.push(s); }
  bool waiting() const { return submissions_.read_available() > 0; }

  bool active() const { return op_.active; }
  // The broadcast running, or the one that runs next.
  uint32_t current_op() const { return op_.active ? op_.sub.op : next_op_; }
  // Whether broadcast `op` is the one running.
  bool runs(uint32_t op) const { return op_.active && op == op_.sub.op; }
  // The next submission, if none runs (broadcast.cc).
  void try_start(uint64_t now);

  // A data frame (not a stream's) that is new on its channel; it consumes
  // `m`. kAccept: the channel takes it (acknowledged as usual); kStale: of
  // a broadcast finished here (taken, acknowledged at once); kDrop: not
  // taken, so sent again (broadcast_rx.cc).
  enum class Take { kAccept, kStale, kDrop };
  Take take_data(rte_mbuf* m, const wire::Parsed& p, uint64_t now);
  // A multicast copy (not a stream's); it consumes `m`.
  void take_datagram(rte_mbuf* m, const wire::Parsed& p, uint64_t now);

  // The machine's timer, when due.
  void timer_due(uint64_t now) {
    if (op_.active && now >= op_.timer_at_ns) fire_timer(now);
  }
  uint64_t timer_at() const { return op_.active ? op_.timer_at_ns : kNoTimer; }
  // Fails the running broadcast, if one runs.
  void fail(uint64_t now, OpError err, algos::Rank peer) {
    if (op_.active) finish(now, err, peer);
  }
  // When the running broadcast fails for want of progress (nothing arrived
  // for the peer timeout); UINT64_MAX when none waits.
  uint64_t silent_at() const;
  // The member was not looking for `unseen` ns: nobody's silence.
  void excuse(uint64_t unseen, uint64_t now) {
    if (op_.active) op_.last_rx_ns = std::min(now, op_.last_rx_ns + unseen);
  }
  // Something impossible was asked: the broadcast fails at the turn's end.
  void internal_error() { internal_error_ = true; }
  // The turn's end: the broadcast may be done, or need the application no
  // more (`frames_queued`: the lanes still hold frames).
  void end_turn(uint64_t now, bool frames_queued);

  // Transmit side. Multicasts not yet sent, and sending them within the
  // lanes' room: returns the lanes whose owed sends must wait behind one.
  bool multicasting() const { return !multicasts_.empty(); }
  uint32_t send_multicasts(uint64_t now, TxLanes& lanes);
  uint32_t segment_length(algos::SegmentIndex seg) const { return op_.plan->segment(seg).length; }
  // The machine will owe nothing more.
  bool machine_done() const { return op_.machine->done(); }
  // Segment `seg`'s frame to `to` (the root copies it out of the
  // application's buffer first); null when a pool is empty or the segment
  // is not here (then the broadcast fails).
  rte_mbuf* data_frame(const drivers::PeerAddress& to, algos::SegmentIndex seg, uint32_t seq, uint16_t lane,
                       uint16_t flags, wire::FrameType type = wire::FrameType::Data);
  // data_frame() for a run: the frames of segments first, first + stride,
  // ... (n of them, at most kMaxRun) to `to`, with sequence numbers from `seq` on; `last_flags` on
  // the last only. Returns how many were built into frames[] - fewer than n
  // when a pool ran dry or a segment is not here (then, as above).
  static constexpr uint32_t kMaxRun = 32;
  uint32_t data_frames(const drivers::PeerAddress& to, algos::SegmentIndex first, uint32_t stride, uint32_t n,
                       uint32_t seq, uint16_t lane, uint16_t last_flags, rte_mbuf** frames,
                       wire::FrameType type = wire::FrameType::Data);
  // A signal: the running broadcast's data header, no payload, the tag in
  // `segment`.
  rte_mbuf* build_signal(algos::Rank to, uint16_t lane, uint32_t tag, uint32_t seq, uint16_t flags);

  struct Bytes {
    size_t store, stash, multicasts, arena;
  };
  Bytes bytes() const;

 private:
  struct Op {
    bool active = false;
    Submission sub;
    std::optional<algos::Plan> plan;
    algos::MachinePtr machine;  // built in machine_arena_: nothing allocated per broadcast
    uint32_t held = 0;
    uint32_t copied_out = 0;  // root: segments copied out of the application's buffer
    bool released = false;    // buffer_done() was published (CompletionBox::release)
    uint64_t start_ns = 0;
    uint64_t held_ns = 0;     // when this member held every segment
    uint64_t last_rx_ns = 0;
    uint64_t timer_at_ns = kNoTimer;  // the machine's one pending timer (Actions::arm)
    uint32_t timer_tag = 0;
  };
  static constexpr uint64_t kNoTimer = UINT64_MAX;
  class Sink;  // the machine's actions (broadcast_sink.h)
  friend class Sink;

  // A later operation this member has not posted yet, but may: as far ahead
  // as an application may post (CompletionBox::kSlots). Its early frames
  // (reliable ones and multicast copies) may wait in the stash.
  bool stashable(uint32_t op) const {
    return !reliable::seq_before(op, next_op_) && op - next_op_ < CompletionBox::kSlots;
  }
  bool fits_op(const wire::DataBody& d, algos::Rank src, uint64_t now, bool signal = false);
  bool take_payload(const rte_mbuf* m, const wire::Parsed& p);
  bool payload_sound(const rte_mbuf* m, const wire::Parsed& p);
  rte_mbuf* copy_payload(rte_mbuf* payload);  // the test hook's copying path
  void accept_segment(rte_mbuf* payload, algos::Rank src, uint16_t lane, const wire::DataBody& d,
                      const wire::Seal& seal, bool in_buffer, uint64_t now);
  void accept_signal(algos::Rank src, const wire::DataBody& d, uint64_t now);
  void replay_stash(uint64_t now);
  void fire_timer(uint64_t now);
  bool materialize(algos::SegmentIndex seg);  // root: copy a segment into a frame buffer
  // The running broadcast needs the application no more: every segment
  // copied into its buffer (the root's: out of it), every frame this member
  // owes so far handed to the port. What is left - acks, resends, answers
  // to a repair request - the engine does alone.
  bool buffer_done(bool frames_queued) const;
  void check_done(uint64_t now);
  void finish(uint64_t now, OpError err, algos::Rank peer);
  // A completion's blame when the group broke: the verdict's.
  void blame_broken(CompletionRecord& rec) const;
  algos::Rank quietest_peer(uint64_t now, uint64_t* silent_ns) const;

  const NodeConfig& cfg_;
  Parts parts_;
  auth::FrameAuth* auth_ = nullptr;
  const uint64_t* heard_ns_ = nullptr;
  std::vector<uint8_t> scratch_;  // a split payload, read whole to check its seal
  // One more than the box has slots: a spsc ring keeps one slot empty.
  boost::lockfree::spsc_queue<Submission, boost::lockfree::capacity<CompletionBox::kSlots + 1>> submissions_;
  algos::MachineArena machine_arena_;
  Op op_;
  uint32_t next_op_ = 1;         // the operation this node runs next
  bool internal_error_ = false;  // the machine asked for something impossible
  SegmentStore store_;           // the running broadcast's segments held here (segment_store.h)
  MulticastQueue multicasts_;    // its multicasts not yet sent (multicast_queue.h)
  Stash stash_;                  // a later broadcast's early frames (stash.h)
};

}  // namespace lanecast::engine
