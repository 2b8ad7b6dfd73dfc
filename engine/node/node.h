// One member of one group, driven by a polling core: the run-to-completion path
// rx burst -> parse -> reliable channel -> machine -> tx burst of the engine's
// design (docs/engine.md).
//
//   node.cc           set-up, the poll loop
//   node_rx.cc        receive path: frames, acks, data and datagrams handed on by kind
//   node_tx.cc        transmit path: owed work into frames, pacing, acks
//   node_frames.cc    ack frames (FrameBuilder, frame_builder.h, begins every frame)
//   node_resends.cc   resends (Resends): the deadlines scanned, frames sent again
//   node_broadcast.cc what the running broadcast (broadcast.h) asks of the node
//   node_streams.cc   what the streams (engine/stream/streams.h) ask of the node
//
// The node owns the running broadcast (broadcast_) and its streams
// (streams_); their BroadcastHost and StreamHost are its small links
// (node_links.h), friends that reach its parts. Rate control (lane_rates.h),
// the peers' books (peer_books.h) and the group addresses joined
// (multicast_groups.h) are parts of their own.
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
#include "engine/node/lane_rates.h"
#include "engine/node/multicast_groups.h"
#include "engine/node/multicast_queue.h"
#include "engine/node/node_links.h"
#include "engine/node/node_resends.h"
#include "engine/node/peer_books.h"
#include "engine/node/segment_store.h"
#include "engine/node/stash.h"
#include "engine/node/tx_lanes.h"
#include "engine/reliable/ack_schedule.h"
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

class Node final : public PollTask {
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
  using PeerCounters = PeerBooks::Counters;
  const PeerCounters& peer_counters(algos::Rank r) const { return peers_.counters(r); }

  const NodeCounters& counters() const { return counters_; }
  // When the last frame of this group from a member came (engine clock; 0:
  // none yet). Any thread: a member leaving its group waits until this is
  // longer ago than any peer would wait to send again.
  uint64_t last_heard_ns() const { return peers_.last_heard_ns(); }
  const NodeConfig& config() const { return cfg_; }
  algos::Rank rank() const { return cfg_.rank; }
  const drivers::PortCaps& port_caps() const { return caps_; }
  // Why multicasts are emulated although multicast was asked for (a port
  // that cannot multicast, a join refused); "" when they are not.
  const std::string& multicast_fallback() const { return groups_.fallback(); }
  // The group address joined per lane (empty when multicasts are emulated).
  const std::vector<drivers::PeerAddress>& group_addresses() const { return groups_.addresses(); }
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
  void handle_frame(rte_mbuf* m, bool addressed, uint64_t now);  // addressed: the port accepts its link header
  void handle_ack(algos::Rank src, const wire::AckBody& ack, uint16_t flags, uint64_t now);
  void handle_data(rte_mbuf* m, const wire::Parsed& p, uint64_t now);
  void handle_datagram(rte_mbuf* m, const wire::Parsed& p, uint64_t now);
  bool open_sealed(rte_mbuf* m, const wire::Parsed& p);  // a group with a key: the frame's seal

  // tx path (node_tx.cc)
  rte_mbuf* build_ack(Channel& c);
  void pump(uint64_t now);
  void pump_owed(uint64_t now, uint32_t blocked_lanes);
  Channels::Outcome send_segment_run(Channel& c, const OwedItem& item, uint64_t now);
  bool send_ack(Channel& c, uint64_t now);
  void send_acks(uint64_t now);

  // fail-stop groups: fail_stop_ decides (fail_stop.h); the node fails what
  // runs when it says so and sends the notices it says are due (node_frames.cc)
  void heard_failure(const wire::Parsed& p, uint64_t now);
  void send_notices(uint64_t now);

  // What the running broadcast and the streams ask of the node
  // (node_broadcast.cc, node_streams.cc; the hosts' headers say what each
  // does), and the resends with their deadlines (node_resends.h): parts
  // that reach the node's other parts.
  friend class BroadcastLink;
  friend class StreamsLink;
  friend class Resends;

  NodeConfig cfg_;
  // A group with a key: this member's seals (engine/auth/frame_auth.h).
  std::unique_ptr<auth::FrameAuth> auth_;
  drivers::Port& port_;
  drivers::PortCaps caps_;
  Pools pools_;
  // The frames this member sends, begun and finished (frame_builder.h).
  FrameBuilder frames_;
  uint16_t rx_link_bytes_;  // and of one we receive (a UD datagram's GRH)
  uint16_t sealed_link_bytes_;  // the end of either that seals cover (the destination)
  std::vector<drivers::PeerAddress> addrs_;   // per rank
  MulticastGroups groups_;  // per lane, joined on the port, when it multicasts (multicast_groups.h)
  reliable::AckSchedule acks_;        // the acks this member owes, and when (ack_schedule.h)
  drivers::Waker* waker_ = nullptr;
  Poller* driver_ = nullptr;
  // Each peer's frames counted, and when its last frame came (peer_books.h).
  PeerBooks peers_;
  static constexpr uint16_t kBurst = 32;
  static_assert(kBurst <= drivers::Port::kMaxScreened, "a burst's link headers are screened in one call");
  static constexpr uint16_t kMaxLanes = TxLanes::kMaxLanes;

  CompletionBox box_;
  NodeCounters counters_;
  // Parts with their own state, after counters_: each writes its slice.
  Channels channels_;   // channels, owed work, flight slabs, resends (channels.h)
  TxLanes tx_lanes_;    // transmit batches, pacers, seals (tx_lanes.h)
  LaneRates rates_{tx_lanes_, counters_};  // rate control: a controller per lane, the pacers following (lane_rates.h)
  FailStop fail_stop_;  // after counters_: it writes to its slice of them
  Resends resends_{*this};  // resends and the deadlines that find them (node_resends.h)
  // The hosts of the broadcast and the streams: before them, which hold them.
  BroadcastLink broadcast_link_{*this};
  StreamsLink streams_link_{*this};
  // The running broadcast: submissions, plan, machine, segments held,
  // multicasts, the stash (broadcast.h).
  Broadcast broadcast_;
  // The streams: every stream's state, the publishers, where their messages
  // go, and what a turn needs to know of them (engine/stream/streams.h).
  stream::Streams streams_;
};

}  // namespace lanecast::engine
