// One member of one group, driven by a polling core: the run-to-completion path
// rx burst -> parse -> reliable channel -> machine -> tx burst of DESIGN.md.
//
// Threading: poll() and everything it calls run on the one polling core that
// owns the node. Application threads talk to it only through submit() and
// take_completion() (Boost.Lockfree spsc queues) and read counters().
#pragma once

#include <boost/lockfree/spsc_queue.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "algos/machine.h"
#include "algos/registry.h"
#include "drivers/port.h"
#include "engine/node_counters.h"
#include "engine/op_types.h"
#include "engine/poller.h"
#include "engine/reliable/recv_channel.h"
#include "engine/reliable/send_channel.h"
#include "engine/segment_fifo.h"
#include "engine/wire.h"

struct rte_mbuf;
struct rte_mempool;

namespace lanecast::engine {

struct NodeConfig {
  uint32_t group_id = 1;
  algos::Rank rank = 0;
  uint32_t nodes = 1;
  uint16_t lanes = 1;                    // lanes the algorithms may use (<= the port's)
  uint32_t segment_bytes = 1400;
  uint64_t max_message_bytes = 16u << 20;
  uint32_t window = 128;                 // frames in flight per peer
  reliable::RttParams rtt;
  uint64_t peer_timeout_ns = 3'000'000'000;  // silence that fails an operation
  uint32_t stash_frames = 4096;          // early frames of the next operation kept
  uint64_t scan_interval_ns = 20'000;    // retransmit and deadline scan period
  algos::AlgoOptions algo_options;       // the group's (mcast_chain's root delay, sync seed)
};

struct Pools {
  rte_mempool* payload = nullptr;  // root's segment buffers
  rte_mempool* header = nullptr;   // header and ack frames
};

class Node final : public PollTask {
 public:
  Node(const NodeConfig& cfg, drivers::Port& port, const Pools& pools,
       std::vector<drivers::PeerAddress> peers);
  ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // Application side (one thread per node).
  bool submit(const Submission& s) { return submissions_.push(s); }
  bool take_completion(CompletionRecord* out) { return completions_.pop(*out); }

  // Polling-core side. Returns the amount of work done (0 = idle).
  uint32_t poll(uint64_t now_ns) override;
  // When this node next needs the core if nothing arrives.
  uint64_t next_wakeup_ns() const override;

  const NodeCounters& counters() const { return counters_; }
  const NodeConfig& config() const { return cfg_; }
  algos::Rank rank() const { return cfg_.rank; }

 private:
  struct Peer {
    drivers::PeerAddress address;
    reliable::SendChannel tx;
    reliable::RecvChannel rx;
    SegmentFifo owed;  // segments the machine asked us to send, not yet sent
    bool ack_listed = false;
    bool in_send_order = false;
  };
  struct StoreEntry {
    rte_mbuf* payload = nullptr;  // the segment's bytes (shared by reference)
    uint32_t crc = 0;
  };
  struct Stashed {
    rte_mbuf* frame;  // nullptr for a signal
    algos::Rank src;
    uint16_t lane;
    wire::DataBody data;
    bool signal;
  };
  struct Op {
    bool active = false;
    Submission sub;
    std::optional<algos::Plan> plan;
    std::unique_ptr<algos::Machine> machine;
    uint32_t held = 0;
    uint64_t start_ns = 0;
    uint64_t last_rx_ns = 0;
    uint64_t timer_at_ns = kNoTimer;  // the machine's one pending timer (Actions::arm)
    uint32_t timer_tag = 0;
  };
  static constexpr uint64_t kNoTimer = UINT64_MAX;
  class Sink;  // the Actions implementation
  friend class Sink;

  // rx path
  void handle_frame(rte_mbuf* m, uint16_t lane, uint64_t now);
  void handle_ack(algos::Rank src, const wire::AckBody& ack, uint64_t now);
  void handle_data(rte_mbuf* m, algos::Rank src, uint16_t lane, const wire::DataBody& d,
                   uint16_t flags, uint32_t payload_offset, uint64_t now);
  void accept_segment(rte_mbuf* payload, algos::Rank src, uint16_t lane, const wire::DataBody& d,
                      uint64_t now);
  bool plan_agrees(const wire::DataBody& d) const;   // same broadcast as posted
  bool segment_valid(const wire::DataBody& d) const; // index, offset, length fit the plan
  bool fits_op(const wire::DataBody& d, algos::Rank src, uint64_t now, bool signal = false);  // both, or drop/fail
  void accept_signal(algos::Rank src, const wire::DataBody& d, uint64_t now);
  void list_ack(algos::Rank src);
  rte_mbuf* detach_payload(rte_mbuf* m, uint32_t payload_offset);

  // machine actions
  void owe(algos::Rank to, algos::SegmentIndex seg, algos::Lane lane);
  void owe_signal(algos::Rank to, uint32_t tag);
  void arm(uint64_t at_ns, uint32_t tag);
  void fire_timer(uint64_t now);
  void deliver(algos::SegmentIndex seg);

  // tx path
  bool materialize(algos::SegmentIndex seg);  // root: copy a segment into a frame buffer
  rte_mbuf* build_data(Peer& peer, algos::SegmentIndex seg, uint32_t seq, uint16_t lane);
  rte_mbuf* build_signal(Peer& peer, uint32_t tag, uint32_t seq);
  rte_mbuf* build_ack(Peer& peer);
  rte_mbuf* build_abandoned(Peer& peer, uint32_t seq, const reliable::SendChannel::Entry& e);
  rte_mbuf* alloc_frame(Peer& peer, uint16_t header_bytes, uint8_t** body);
  void pump_sends(uint64_t now);
  void send_acks();
  void scan(uint64_t now);
  uint32_t flush_tx();

  // operation life cycle
  void try_start(uint64_t now);
  void check_done(uint64_t now);
  void finish(uint64_t now, OpError err, algos::Rank peer);
  void release_store();

  NodeConfig cfg_;
  drivers::Port& port_;
  Pools pools_;
  uint16_t link_bytes_;
  std::vector<Peer> peers_;
  std::vector<algos::Rank> ack_list_;
  std::vector<StoreEntry> store_;
  std::vector<Stashed> stash_;
  size_t stash_count_ = 0;
  Op op_;
  uint32_t next_op_ = 1;  // the operation this node runs next
  // Peers in the order the machine first owed them a segment in this
  // operation: the order it meant its sends to go out (largest subtree first,
  // and so on). pump_sends() serves them by that priority.
  std::vector<algos::Rank> send_order_;
  uint64_t next_scan_ns_ = 0;
  uint64_t owed_total_ = 0;     // sum of every peer's owed segments
  uint64_t unacked_total_ = 0;  // frames in flight over every channel
  bool internal_error_ = false; // the machine asked for something impossible
  std::optional<CompletionRecord> pending_completion_;  // completion queue was full

  static constexpr uint16_t kBurst = 32;
  // Owed entries carry their lane in bits 28-29, and bit 31 marks a signal
  // (its tag in the segment bits).
  static constexpr uint32_t kLaneShift = 28;
  static constexpr uint32_t kSegmentMask = (1u << kLaneShift) - 1;
  static constexpr uint32_t kLaneMask = 3;
  static constexpr uint32_t kSignalBit = 1u << 31;
  static constexpr uint16_t kMaxLanes = 4;
  static constexpr uint16_t kTxCap = 256;
  struct TxQueue {  // frames for one lane, sent by the next flush
    rte_mbuf* frames[kTxCap];
    uint16_t count = 0;
  };
  bool tx_room(uint16_t lane);  // flushes that lane first if it is full
  void tx_push(uint16_t lane, rte_mbuf* m) { tx_[lane].frames[tx_[lane].count++] = m; }
  bool tx_pending() const;
  TxQueue tx_[kMaxLanes];

  boost::lockfree::spsc_queue<Submission, boost::lockfree::capacity<64>> submissions_;
  boost::lockfree::spsc_queue<CompletionRecord, boost::lockfree::capacity<64>> completions_;
  NodeCounters counters_;
};

}  // namespace lanecast::engine
