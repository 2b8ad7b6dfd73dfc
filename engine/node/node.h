// One member of one group, driven by a polling core: the run-to-completion path
// rx burst -> parse -> reliable channel -> machine -> tx burst of the engine's
// design (docs/engine.md).
//
//   node.cc         set-up, the poll loop, the life of a broadcast
//   node_rx.cc      receive path: frames, acks, data, datagrams, the stash
//   node_tx.cc      transmit path: the machine's actions, frames, pacing, acks
//   node_timers.cc  retransmission timers and deadlines
//   node_streams.cc what the streams (engine/stream/streams.h) ask of the node
//
// The node owns its streams (streams_) and is their StreamHost: final, so
// its own calls to the frame helpers it shares with them stay direct.
//
// Threading: poll() and everything it calls run on the one polling core that
// owns the node. Application threads talk to it only through submit() (a
// Boost.Lockfree spsc queue) and the completion box (completion_box.h), and
// read counters().
#pragma once

#include <boost/lockfree/spsc_queue.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "algos/arena.h"
#include "algos/machine.h"
#include "algos/registry.h"
#include "drivers/port.h"
#include "engine/node/channels.h"
#include "engine/node/completion_box.h"
#include "engine/node/fail_stop.h"
#include "engine/node/multicast_queue.h"
#include "engine/node/segment_store.h"
#include "engine/node/stash.h"
#include "engine/node/tx_lanes.h"
#include "engine/reliable/ack_schedule.h"
#include "engine/reliable/rate_control.h"
#include "lanecast/group_spec.h"
#include "engine/node/node_counters.h"
#include "engine/node/op_types.h"
#include "engine/node/owed_runs.h"
#include "engine/node/pacer.h"
#include "engine/runtime/poller.h"
#include "engine/runtime/pools.h"
#include "engine/stream/streams.h"
#include "engine/wire/wire.h"

struct rte_mbuf;
struct rte_mempool;

namespace lanecast::drivers {
class Waker;
}
namespace lanecast::engine::auth {
struct EpochKeys;
class FrameAuth;
}

namespace lanecast::engine {

// A rate controller's ceiling when the group gave no port rate: a 10 Gbit/s
// port's, the most a lane of this engine's ports has carried.
inline constexpr uint64_t kRateControlCeilingBps = 10'000'000'000;

struct NodeConfig {
  uint32_t group_id = 1;
  uint32_t epoch = 1;                    // the group's incarnation (engine/wire/wire.h)
  // The group's multicast addresses come from this seed (engine/group/address_seed.h),
  // the same in every member. With multicast on and a port that can join
  // them, a multicast is one frame to the group address; otherwise (off, or
  // a join refused: multicast_fallback() says why) one datagram per member.
  drivers::GroupAddressSeed address_seed;
  bool multicast = true;
  // Members are processes that may die (Engine::join): the first broadcast to
  // fail makes the group broken for this epoch - the member tells every
  // other member (failure notices), and every broadcast still running or
  // posted later fails at once (OpError::GroupBroken) naming the lost rank.
  // Off for members of one process, where a silent member is a stalled
  // thread that comes back, and channels carry on (they stay in step).
  bool fail_stop = false;
  algos::Rank rank = 0;
  uint32_t nodes = 1;
  uint16_t lanes = 1;                    // lanes the algorithms may use (<= the port's)
  uint32_t segment_bytes = 1400;
  uint64_t max_message_bytes = 16u << 20;
  uint32_t window = 128;                 // frames in flight per (peer, lane)
  reliable::RttParams rtt;
  uint64_t peer_timeout_ns = 3'000'000'000;  // silence that fails an operation
  uint32_t stash_frames = 1024;          // early frames of the next operation kept
  // Channels with frames in flight at once (slabs of the flight pool); 0:
  // min(32, peers x lanes). More only helps a node that sends to many peers
  // at once (linear's root, symmetric).
  uint32_t active_channels = 0;
  // Acks: at most this many data frames per ack (0: window / 4), and none
  // later than ack_delay_ns after the first unacknowledged frame. Frames that
  // ask for an ack (wire::kFlagAckNow) and frames past a gap get one at once.
  uint32_t ack_every = 0;
  uint64_t ack_delay_ns = 500'000;
  // Pacing: each lane sends at most this many bits per second (0: as fast as
  // the port takes frames), in bursts of at most pace_burst_bytes (0: 200 us
  // of the rate, at least two frames).
  uint64_t lane_rate_bps = 0;
  uint64_t pace_burst_bytes = 0;
  // Bytes the link adds to each frame as its rate counts them: 24 on an
  // Ethernet wire (preamble, FCS, gap), 0 for a Linux tbf (it counts the frame).
  uint32_t pace_overhead_bytes = 24;
  // Each lane's pacer follows a rate controller (engine/reliable/rate_control.h)
  // fed by the lane's RTT samples and losses; lane_rate_bps is its ceiling
  // (0: kRateControlCeilingBps).
  bool rate_control = false;
  uint64_t min_scan_interval_ns = 20'000;  // timers are checked at most this often
  algos::AlgoOptions algo_options;       // the group's (mcast_chain's root delay, sync seed)
  lanecast::StreamOptions streams;       // fanout resolved (>= 1)
  // The epoch's keys when the group has one (docs/security.md): every frame
  // sent is sealed, every frame received must open. Null: no seals.
  std::shared_ptr<const auth::EpochKeys> auth;
  // The group's shape (algos::GroupShape), equal on every member: the
  // hypercube's order and each rank's site. Empty: rank order, one site.
  std::vector<algos::Rank> hypercube_order;
  std::vector<uint32_t> site_of_rank;
  // Test hook, never set in production: forwarding copies each received
  // payload into a fresh buffer. The zero-copy test turns it on to show that
  // it notices a copying forward path.
  bool test_copy_forwarded_payloads = false;
};

class Node final : public PollTask, private stream::StreamHost {
 public:
  Node(const NodeConfig& cfg, drivers::Port& port, const Pools& pools,
       std::vector<drivers::PeerAddress> peers);
  ~Node() override;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // Application side (one thread per node). submit() wakes the core if it sleeps.
  bool submit(const Submission& s);
  CompletionBox& completions() { return box_; }

  // Polling-core side. Returns the amount of work done (0 = idle). poll() is
  // poll_rx() then poll_tx(); a polling core runs every member's rx half
  // before any member's tx half (poller.h).
  uint32_t poll(uint64_t now_ns);
  uint32_t poll_rx(uint64_t now_ns) override;
  uint32_t poll_tx(uint64_t now_ns) override;
  // When this node next needs the core if nothing arrives.
  uint64_t next_wakeup_ns() const override;
  bool arm_wakeup() override;
  void disarm_wakeup() override;
  bool busy() const override { return op_.active || channels_.unacked() > 0 || streams_.busy(); }
  // Frames are owed and the pacer holds them back past `now` (node.cc).
  bool pacer_holds(uint64_t now_ns) const override;
  // Control path (core parked): the waker of the core that polls this node.
  void attach_waker(drivers::Waker* w);
  // The poller an application thread drives while it waits for this node's
  // broadcasts when the engine progresses in calls (poller.h); null when a
  // polling core runs the node.
  void attach_driver(Poller* p) { driver_ = p; }
  Poller* driver() const { return driver_; }

  // Streams (streams_, engine/stream/streams.h), application side. A
  // publisher the application made (Member::open_stream): the node owns it
  // from here and its core takes it at its next turn. False when too many
  // are waiting.
  bool open_publisher(std::unique_ptr<stream::PublisherShared> p) {
    if (!streams_.offer(std::move(p))) return false;
    notify_core();
    return true;
  }
  // Wakes the core if it sleeps (a publisher's ring went from empty to not).
  void notify_core() {
    if (waker_ != nullptr) waker_->notify();
  }
  // The ring of messages delivered here and not yet taken (null until this
  // member's first stream started): one consumer, the application.
  stream::RecordRingHeader* delivery_ring() const { return streams_.delivery_ring(); }
  // Instead of the ring: the core calls this for every message delivered
  // here, in order (the bytes are valid during the call). Set before any
  // stream starts; it must not block.
  using MessageHandler = stream::DeliveryTarget::Handler;
  void set_message_handler(MessageHandler h) { streams_.set_message_handler(std::move(h)); }
  // Why this member's streams stopped (OpError::None while they run), and the
  // peer it names.
  OpError stream_error() const { return streams_.error(); }
  bool stream_evicted() const { return streams_.evicted(); }
  algos::Rank stream_error_peer() const { return streams_.error_peer(); }
  uint64_t max_stream_message() const { return streams_.max_message(); }
  static constexpr uint64_t kMaxStreamMessage = stream::Streams::kMaxMessage;
  // Slot i's counters (i < stream_slots()), or null while no stream has
  // used it: application threads read them while the core runs.
  const stream::StreamMirror* stream_mirror(size_t i) const { return streams_.mirror(i); }
  size_t stream_slots() const { return streams_.slots(); }
  // This member's seals in a group with a key (null without one). The
  // member's own core seals with it; a fuzzer playing a member that holds
  // the key seals its frames with it too, so their counters continue the
  // member's and every receiver's window takes them.
  auth::FrameAuth* frame_auth() { return auth_.get(); }
  // Frames to and from each member (both lanes): data and streams' batches
  // sent (first transmissions), sent again, and accepted.
  struct PeerCounters {
    Counter tx_data, tx_retransmits, rx_data;
  };
  const PeerCounters& peer_counters(algos::Rank r) const { return peer_counters_[r]; }

  const NodeCounters& counters() const { return counters_; }
  // When the last frame of this group from a member came (engine clock; 0:
  // none yet). Any thread: a member leaving its group waits until this is
  // longer ago than any peer would wait to send again.
  uint64_t last_heard_ns() const { return last_heard_ns_.load(std::memory_order_relaxed); }
  const NodeConfig& config() const { return cfg_; }
  algos::Rank rank() const { return cfg_.rank; }
  const drivers::PortCaps& port_caps() const { return caps_; }
  // Why multicasts are emulated although multicast was asked for (a port
  // that cannot multicast, a join refused); "" when they are not.
  const std::string& multicast_fallback() const { return multicast_fallback_; }
  // The group address joined per lane (empty when multicasts are emulated).
  const std::vector<drivers::PeerAddress>& group_addresses() const { return group_addrs_; }
  // Bytes of state this node allocated at construction, by part (for the
  // memory report of `lanecast bench --memory`).
  struct Footprint {
    size_t channels, flight, owed, store, stash, datagrams, other;
    size_t total() const { return channels + flight + owed + store + stash + datagrams + other; }
  };
  Footprint footprint() const;

 private:
  using Channel = Channels::Channel;
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
  class Sink;  // the Actions implementation
  friend class Sink;

  Channel& channel(algos::Rank peer, uint16_t lane) { return channels_.at(peer, lane); }

  // rx path (node_rx.cc)
  void handle_frame(rte_mbuf* m, uint16_t lane, uint64_t now);
  void handle_ack(algos::Rank src, const wire::AckBody& ack, uint16_t flags, uint64_t now);
  void handle_data(rte_mbuf* m, const wire::Parsed& p, uint64_t now);
  void handle_datagram(rte_mbuf* m, const wire::Parsed& p, uint64_t now);
  bool take_payload(const rte_mbuf* m, const wire::Parsed& p);
  bool payload_sound(const rte_mbuf* m, const wire::Parsed& p);  // CRC and seal, each failure counted
  bool seal_ok(const uint8_t* bytes, uint32_t len, const wire::Parsed& p) override;
  bool open_sealed(rte_mbuf* m, const wire::Parsed& p);  // a group with a key: the frame's seal
  void accept_segment(rte_mbuf* payload, algos::Rank src, uint16_t lane, const wire::DataBody& d,
                      const wire::Seal& seal, bool in_buffer, uint64_t now);
  void accept_signal(algos::Rank src, const wire::DataBody& d, uint64_t now);
  bool plan_agrees(const wire::DataBody& d) const;   // same broadcast as posted
  bool segment_valid(const wire::DataBody& d) const; // index, offset, length fit the plan
  // A later operation this member has not posted yet, but may: as far ahead
  // as an application may post (CompletionBox::kSlots). Its early frames
  // (reliable ones and multicast copies) may wait in the stash.
  bool stashable(uint32_t op) const {
    return !reliable::seq_before(op, next_op_) && op - next_op_ < CompletionBox::kSlots;
  }
  bool fits_op(const wire::DataBody& d, algos::Rank src, uint64_t now, bool signal = false);
  rte_mbuf* detach_payload(rte_mbuf* m, uint32_t payload_offset) override;
  rte_mbuf* copy_payload(rte_mbuf* payload);  // the test hook's copying path

  // machine actions (node_tx.cc)
  void owe(algos::Rank to, algos::SegmentIndex seg, algos::Lane lane);
  void owe_signal(algos::Rank to, uint32_t tag);
  void multicast(algos::SegmentIndex seg, algos::Lane lane);
  void arm(uint64_t at_ns, uint32_t tag);
  void fire_timer(uint64_t now);
  void deliver(algos::SegmentIndex seg);

  // tx path (node_tx.cc)
  bool materialize(algos::SegmentIndex seg);  // root: copy a segment into a frame buffer
  // The running broadcast needs the application no more: every segment
  // copied into its buffer (the root's: out of it), every frame this member
  // owes so far handed to the port. What is left - acks, resends, answers
  // to a repair request - the engine does alone.
  bool buffer_done() const;
  rte_mbuf* build_data(const drivers::PeerAddress& to, algos::SegmentIndex seg, uint32_t seq, uint16_t lane,
                       uint16_t flags, wire::FrameType type = wire::FrameType::Data);
  rte_mbuf* build_signal(const Channel& c, uint32_t tag, uint32_t seq, uint16_t flags);
  rte_mbuf* build_ack(Channel& c);
  wire::Origin origin() const { return {cfg_.group_id, cfg_.epoch, cfg_.rank}; }
  // A data frame's payload seal (a group with a key), after its body.
  void put_payload_seal(uint8_t* at, const wire::Seal& seal) const {
    if (auth_ != nullptr) wire::write_payload_seal(at, seal);
  }
  rte_mbuf* build_abandoned(const Channel& c, uint32_t seq, const reliable::InFlight& e);
  rte_mbuf* alloc_frame(const drivers::PeerAddress& to, uint16_t header_bytes, uint8_t** body) override;
  rte_mbuf* attach_payload(rte_mbuf* header, rte_mbuf* payload) override;  // zero-copy: by reference
  rte_mbuf* flatten(rte_mbuf* chained);
  void pump(uint64_t now);
  void pump_resends(uint64_t now);
  void pump_datagrams(uint64_t now);
  void join_groups();
  void leave_groups();
  void pump_owed(uint64_t now);
  bool send_ack(Channel& c, uint64_t now);
  void send_acks(uint64_t now);

  // timers (node_timers.cc)
  void scan(uint64_t now);
  void excuse_silence(uint64_t unseen_from, uint64_t now);
  void note_deadline(uint64_t at) {
    if (at < scan_due_ns_) scan_due_ns_ = at;
  }

  // what the streams ask of the node (node_streams.cc; stream_host.h says what each does)
  bool lane_room(uint16_t lane, uint32_t frame_bytes, uint64_t now, bool datagram) override;
  void push(uint16_t lane, rte_mbuf* m) override;
  bool owe_batch(algos::Rank child, uint32_t batch_low, uint16_t slot) override;
  void grow_runs(uint32_t extra) override;
  void internal_error() override;
  void streams_failed(uint64_t now, OpError err, algos::Rank peer) override;

  // fail-stop groups: fail_stop_ decides (fail_stop.h); the node fails what
  // runs when it says so and sends the notices it says are due (node_frames.cc)
  void heard_failure(const wire::Parsed& p, uint64_t now);
  void send_notices(uint64_t now);
  // A completion's blame when the group broke: the verdict's.
  void blame_broken(CompletionRecord& rec) const;

  // operation life cycle (node.cc)
  void try_start(uint64_t now);  // by value: may move forward to the post's time
  void replay_stash(uint64_t now);
  void check_done(uint64_t now);
  void finish(uint64_t now, OpError err, algos::Rank peer);
  void publish(const CompletionRecord& rec);

  NodeConfig cfg_;
  // A group with a key: this member's seals (engine/auth/frame_auth.h),
  // kFlagSealed on every frame it writes, and its frames' header lengths
  // with the seals (without: the wire's plain ones).
  std::unique_ptr<auth::FrameAuth> auth_;
  uint16_t seal_flag_ = 0;
  uint32_t hdr_data_ = wire::kDataHeaderBytes;
  uint32_t hdr_ack_ = wire::kAckHeaderBytes;
  uint32_t hdr_failed_ = wire::kFailedBytes;
  std::vector<uint8_t> scratch_;  // a split payload, read whole to check its seal
  drivers::Port& port_;
  drivers::PortCaps caps_;
  Pools pools_;
  uint16_t link_bytes_;     // link header of a frame we send
  // A data frame carrying a full segment, link header included.
  uint32_t full_frame_bytes() const { return link_bytes_ + hdr_data_ + cfg_.segment_bytes; }
  uint16_t rx_link_bytes_;  // and of one we receive (a UD datagram's GRH)
  uint16_t sealed_link_bytes_;  // the end of either that seals cover (the destination)
  std::vector<drivers::PeerAddress> addrs_;   // per rank
  std::vector<drivers::PeerAddress> group_addrs_;  // per lane, joined on the port, when it multicasts
  std::string multicast_fallback_;
  algos::MachineArena machine_arena_;
  reliable::AckSchedule acks_;        // the acks this member owes, and when (ack_schedule.h)
  uint32_t datagram_blocked_lanes_ = 0;  // lanes whose next multicast could not go in this pump
  Op op_;
  uint32_t next_op_ = 1;  // the operation this node runs next
  uint64_t scan_due_ns_ = UINT64_MAX;   // earliest timer of a channel or of the broadcast
  uint32_t timer_defers_ = 0;          // turns the due timers waited for a receive queue to drain
  uint64_t last_rx_poll_ns_ = 0;       // this member's last poll_rx (0: after a nap)
  uint32_t hold_turns_ = 0;            // turns the timers still wait after a stall
  uint64_t excused_to_ns_ = 0;         // silences already excused up to here (excuse_silence)
  uint64_t last_scan_ns_ = 0;
  bool internal_error_ = false; // the machine asked for something impossible
  drivers::Waker* waker_ = nullptr;
  Poller* driver_ = nullptr;

  std::unique_ptr<PeerCounters[]> peer_counters_;
  // When each peer's last frame of this epoch came (0: never). Read only
  // when a broadcast fails for want of progress (quietest_peer).
  std::unique_ptr<uint64_t[]> heard_ns_;
  std::atomic<uint64_t> last_heard_ns_{0};  // the latest of them (last_heard_ns())
  algos::Rank quietest_peer(uint64_t now, uint64_t* silent_ns) const;
  static constexpr uint16_t kBurst = 32;
  static constexpr uint32_t kMaxTimerDefers = 64;  // turns: 64 full bursts read per lane
  static constexpr uint64_t kStallNs = 500'000;     // a gap between two turns that is a stall
  static constexpr uint16_t kMaxLanes = TxLanes::kMaxLanes;
  // Rate control (NodeConfig::rate_control): a controller per lane.
  std::vector<reliable::RateControl> rates_;
  void adapt_rate(uint16_t lane, const reliable::SendChannel::AckResult& r, uint64_t now);
  void rate_timeout(uint16_t lane, uint64_t now);
  void rate_changed(uint16_t lane, uint64_t now);  // the pacer follows; counters_.rate_mbit

  // One more than the box has slots: a spsc ring keeps one slot empty.
  boost::lockfree::spsc_queue<Submission, boost::lockfree::capacity<CompletionBox::kSlots + 1>> submissions_;
  CompletionBox box_;
  NodeCounters counters_;
  // Parts with their own state, after counters_: each writes its slice.
  Channels channels_;   // channels, owed work, flight slabs, resends (channels.h)
  SegmentStore store_;  // the running broadcast's segments held here (segment_store.h)
  MulticastQueue multicasts_;  // its multicasts not yet sent (multicast_queue.h)
  TxLanes tx_lanes_;    // transmit batches, pacers, seals (tx_lanes.h)
  Stash stash_;         // a later broadcast's early frames (stash.h)
  FailStop fail_stop_;  // after counters_: it writes to its slice of them
  // The streams: every stream's state, the publishers, where their messages
  // go, and what a turn needs to know of them (engine/stream/streams.h).
  stream::Streams streams_;
};

}  // namespace lanecast::engine
