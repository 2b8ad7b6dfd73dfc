// One member of one group, driven by a polling core: the run-to-completion path
// rx burst -> parse -> reliable channel -> machine -> tx burst of the engine's
// design (docs/engine.md).
//
//   node.cc           set-up, the poll loop
//   node_rx.cc        receive path: frames, acks, data and datagrams handed on by kind
//   node_tx.cc        transmit path: owed work into frames, pacing, acks
//   node_frames.cc    ack and abandoned frames (FrameBuilder, frame_builder.h, begins every frame)
//   node_resends.cc   resends: the deadlines scanned, frames sent again
//   node_broadcast.cc what the running broadcast (broadcast.h) asks of the node
//   node_streams.cc   what the streams (engine/stream/streams.h) ask of the node
//
// The node owns the running broadcast (broadcast_) and its streams
// (streams_), and is their BroadcastHost and StreamHost: final, so its own
// calls to the helpers it shares with them stay direct.
//
// Threading: poll() and everything it calls run on the one polling core that
// owns the node. Application threads talk to it only through submit() (a
// Boost.Lockfree spsc queue, Broadcast's) and the completion box
// (completion_box.h), and read counters().
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
#include "engine/node/broadcast.h"
#include "engine/node/channels.h"
#include "engine/node/completion_box.h"
#include "engine/node/fail_stop.h"
#include "engine/node/frame_builder.h"
#include "engine/node/multicast_queue.h"
#include "engine/node/segment_store.h"
#include "engine/node/stash.h"
#include "engine/node/tx_lanes.h"
#include "engine/reliable/ack_schedule.h"
#include "engine/reliable/rate_control.h"
#include "lanecast/group_spec.h"
#include "engine/node/node_config.h"
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

class Node final : public PollTask, private BroadcastHost, private stream::StreamHost {
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
  bool busy() const override { return broadcast_.active() || channels_.unacked() > 0 || streams_.busy(); }
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
  // The streams, for the calls of their application side (streams.h): the
  // delivery ring or the message handler, why they stopped, the largest
  // message, each slot's counters. Those read atomics and rings the core
  // writes, so application threads make them while the core runs; the rest
  // of Streams is the core's (a publisher comes through open_publisher,
  // which wakes the core).
  stream::Streams& streams() { return streams_; }
  const stream::Streams& streams() const { return streams_; }
  static constexpr uint64_t kMaxStreamMessage = stream::Streams::kMaxMessage;
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
  Channel& channel(algos::Rank peer, uint16_t lane) { return channels_.at(peer, lane); }

  // rx path (node_rx.cc)
  void handle_frame(rte_mbuf* m, uint16_t lane, uint64_t now);
  void handle_ack(algos::Rank src, const wire::AckBody& ack, uint16_t flags, uint64_t now);
  void handle_data(rte_mbuf* m, const wire::Parsed& p, uint64_t now);
  void handle_datagram(rte_mbuf* m, const wire::Parsed& p, uint64_t now);
  bool seal_ok(const uint8_t* bytes, uint32_t len, const wire::Parsed& p) override;
  bool open_sealed(rte_mbuf* m, const wire::Parsed& p);  // a group with a key: the frame's seal
  rte_mbuf* detach_payload(rte_mbuf* m, uint32_t payload_offset) override;

  // tx path (node_tx.cc)
  rte_mbuf* build_ack(Channel& c);
  rte_mbuf* build_abandoned(const Channel& c, uint32_t seq, const reliable::InFlight& e);
  // frames_'s, for the streams (node_streams.cc)
  rte_mbuf* alloc_frame(const drivers::PeerAddress& to, uint16_t header_bytes, uint8_t** body) override;
  rte_mbuf* attach_payload(rte_mbuf* header, rte_mbuf* payload) override;
  void pump(uint64_t now);
  void join_groups();
  void leave_groups();
  void pump_owed(uint64_t now, uint32_t blocked_lanes);
  bool send_ack(Channel& c, uint64_t now);
  void send_acks(uint64_t now);

  // resends and deadlines (node_resends.cc)
  void scan(uint64_t now);
  void pump_resends(uint64_t now);
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

  // what the running broadcast asks of the node (node_broadcast.cc; broadcast_host.h says what each does)
  bool owe_segment(algos::Rank to, algos::SegmentIndex seg, algos::Lane lane) override;
  bool owe_signal(algos::Rank to, uint32_t tag) override;
  bool channels_done(bool acked) const override;
  void broadcast_started(uint64_t now) override;
  void broadcast_ended(uint64_t now, bool failed) override;
  void group_broken(uint64_t now, algos::Rank peer) override;

  NodeConfig cfg_;
  // A group with a key: this member's seals (engine/auth/frame_auth.h).
  std::unique_ptr<auth::FrameAuth> auth_;
  drivers::Port& port_;
  drivers::PortCaps caps_;
  Pools pools_;
  // The frames this member sends, begun and finished (frame_builder.h).
  FrameBuilder frames_;
  // A data frame carrying a full segment, link header included.
  uint32_t full_frame_bytes() const { return frames_.data_frame_bytes(cfg_.segment_bytes); }
  uint16_t rx_link_bytes_;  // and of one we receive (a UD datagram's GRH)
  uint16_t sealed_link_bytes_;  // the end of either that seals cover (the destination)
  std::vector<drivers::PeerAddress> addrs_;   // per rank
  std::vector<drivers::PeerAddress> group_addrs_;  // per lane, joined on the port, when it multicasts
  std::string multicast_fallback_;
  reliable::AckSchedule acks_;        // the acks this member owes, and when (ack_schedule.h)
  uint64_t scan_due_ns_ = UINT64_MAX;   // earliest timer of a channel or of the broadcast
  uint32_t timer_defers_ = 0;          // turns the due timers waited for a receive queue to drain
  uint64_t last_rx_poll_ns_ = 0;       // this member's last poll_rx (0: after a nap)
  uint32_t hold_turns_ = 0;            // turns the timers still wait after a stall
  uint64_t excused_to_ns_ = 0;         // silences already excused up to here (excuse_silence)
  uint64_t last_scan_ns_ = 0;
  drivers::Waker* waker_ = nullptr;
  Poller* driver_ = nullptr;

  std::unique_ptr<PeerCounters[]> peer_counters_;
  // When each peer's last frame of this epoch came (0: never). Read only
  // when a broadcast fails for want of progress (quietest_peer).
  std::unique_ptr<uint64_t[]> heard_ns_;
  std::atomic<uint64_t> last_heard_ns_{0};  // the latest of them (last_heard_ns())
  static constexpr uint16_t kBurst = 32;
  static constexpr uint32_t kMaxTimerDefers = 64;  // turns: 64 full bursts read per lane
  static constexpr uint64_t kStallNs = 500'000;     // a gap between two turns that is a stall
  static constexpr uint16_t kMaxLanes = TxLanes::kMaxLanes;
  // Rate control (NodeConfig::rate_control): a controller per lane.
  std::vector<reliable::RateControl> rates_;
  void adapt_rate(uint16_t lane, const reliable::SendChannel::AckResult& r, uint64_t now);
  void rate_timeout(uint16_t lane, uint64_t now);
  void rate_changed(uint16_t lane, uint64_t now);  // the pacer follows; counters_.rate_mbit

  CompletionBox box_;
  NodeCounters counters_;
  // Parts with their own state, after counters_: each writes its slice.
  Channels channels_;   // channels, owed work, flight slabs, resends (channels.h)
  TxLanes tx_lanes_;    // transmit batches, pacers, seals (tx_lanes.h)
  FailStop fail_stop_;  // after counters_: it writes to its slice of them
  // The running broadcast: submissions, plan, machine, segments held,
  // multicasts, the stash (broadcast.h).
  Broadcast broadcast_;
  // The streams: every stream's state, the publishers, where their messages
  // go, and what a turn needs to know of them (engine/stream/streams.h).
  stream::Streams streams_;
};

}  // namespace lanecast::engine
