// lanecast's public C++ API.
//
//   lanecast::Engine engine({});                       // EAL, polling cores
//   auto group = engine.create_local_group(opts);      // p members, in-process fabric
//   auto done = group->member(r).broadcast(root, buf); // on every member
//   lanecast::Status s = done.wait();
//
// broadcast() is collective: every member posts it with the same root and size;
// the root's buffer is sent, every other member's buffer is filled. A member's
// broadcasts complete in the order they were posted. Each Member is used by one
// application thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "algos/auto/rules.h"
#include "algos/registry.h"
#include "engine/node_counters.h"
#include "engine/op_types.h"

namespace lanecast {

using Rank = algos::Rank;

namespace engine {
class Node;
class Poller;
}  // namespace engine
namespace drivers {
class Fabric;
}

struct Status {
  engine::OpError error = engine::OpError::None;
  std::string message;  // empty when ok
  bool ok() const { return error == engine::OpError::None; }
};

struct EngineOptions {
  uint32_t polling_cores = 0;  // 0: one per CPU this process may use, at most 2
  uint32_t memory_mb = 2048;   // DPDK memory (anonymous pages unless hugepages)
  bool hugepages = false;
  std::string log_level = "error";
  uint64_t idle_sleep_max_ns = 50'000;  // 0: never sleep (a dedicated core)
};

struct FabricOptions {
  double rate_mbit = 10'000;   // per link; 0 = unlimited
  double latency_us = 0;       // one way, per link
  double loss = 0;             // random frame loss fraction, [0, 1)
  uint64_t seed = 1;
  uint32_t queue_frames = 4096;  // switch buffer per output link
};

struct GroupOptions {
  uint32_t nodes = 8;
  uint16_t lanes = 1;                       // lanes per member: queues of its port (1..4)
  std::string algo = "chain";              // or "auto": chosen per broadcast
  std::string auto_rules_file;              // rules for "auto"; empty = built in
  uint32_t segment_bytes = 1400;            // payload per frame
  uint64_t max_message_bytes = 16u << 20;   // sizes buffers and pools
  uint32_t window = 128;                    // frames in flight per peer
  double peer_timeout_ms = 3000;            // silence that fails a broadcast
  // mcast_chain's options (Hoefler, Siebert & Rehm; docs/algorithms.md), for
  // groups whose algorithm is mcast_chain or auto: the root waits this long
  // before it multicasts (0: off; below peer_timeout_ms), and, when the seed
  // is nonzero, for one non-root member drawn per broadcast from it to tell
  // the root that it has posted the broadcast.
  double mcast_root_delay_us = 0;
  uint64_t mcast_sync_seed = 0;
  FabricOptions fabric;                     // used when `ports` is empty
  // DPDK devargs, one per member (e.g. "net_af_packet0,iface=veth0"): members
  // talk over these ports instead of the in-process fabric.
  std::vector<std::string> ports;
};

// A broadcast in progress on one member.
class Completion {
 public:
  Completion() = default;
  // True once the broadcast finished on this member (no waiting).
  bool ready();
  // Blocks (sleeping, not spinning) until finished; returns the outcome.
  Status wait();
  // Polling-core timestamps of this member's part, in ns (after ready()).
  uint64_t start_ns() const { return rec_.start_ns; }
  uint64_t finish_ns() const { return rec_.finish_ns; }

 private:
  friend class Member;
  Completion(class Member* m, uint32_t op) : member_(m), op_(op) {}
  class Member* member_ = nullptr;
  uint32_t op_ = 0;
  bool done_ = false;
  engine::CompletionRecord rec_;
};

class Member {
 public:
  // Posts this member's part of a broadcast of `buffer.size()` bytes from
  // `root`. `algo` overrides the group's algorithm for this broadcast ("auto"
  // lets the rules choose from size and group; every member chooses alike).
  // Throws std::invalid_argument for a root outside the group, a size over the
  // group's limit, or an unknown algorithm; the buffer must stay untouched
  // until the completion is ready.
  Completion broadcast(Rank root, std::span<std::byte> buffer, std::string_view algo = {});
  // The algorithm a broadcast of `size` bytes runs when posted with `algo`.
  algos::Algo resolve(std::string_view algo, uint64_t size) const;
  Rank rank() const;
  const engine::NodeCounters& counters() const;

 private:
  friend class Engine;
  friend class LocalGroup;
  friend class Completion;
  Member(engine::Node* n, std::optional<algos::Algo> algo, const algos::autoselect::Rules* rules)
      : node_(n), default_algo_(algo), rules_(rules) {}
  bool collect(uint32_t op, engine::CompletionRecord* out);
  engine::Node* node_;
  std::optional<algos::Algo> default_algo_;  // empty: the group runs "auto"
  const algos::autoselect::Rules* rules_;
  uint32_t next_op_ = 1;
  std::vector<engine::CompletionRecord> early_;  // completions taken while waiting for another
};

struct FabricCounters {
  uint64_t switched = 0, lost = 0, queue_drops = 0, unknown_destination = 0;
};

// A member's DPDK port as the PMD counts it (rte_eth_stats).
struct PortCounters {
  uint64_t rx_frames = 0, tx_frames = 0;
  uint64_t rx_missed = 0;    // the device or kernel ring had no room
  uint64_t rx_errors = 0, tx_errors = 0;
  uint64_t rx_no_buffer = 0; // the rx mempool was empty
};

// p members in this process, served by its polling cores, joined either by the
// in-process fabric (DPDK ring ports and an emulated switch) or by one DPDK
// port each (GroupOptions::ports).
class LocalGroup {
 public:
  ~LocalGroup();
  uint32_t size() const { return static_cast<uint32_t>(members_.size()); }
  Member& member(Rank r) { return *members_.at(r); }
  const GroupOptions& options() const { return opts_; }
  FabricCounters fabric_counters() const;
  PortCounters port_counters(Rank r) const;
  // DPDK memory the group's buffer pools take (to size EngineOptions::memory_mb).
  // Throws std::invalid_argument for bad options, like create_local_group().
  static uint64_t memory_bytes(const GroupOptions& opts);

 private:
  friend class Engine;
  LocalGroup() = default;
  GroupOptions opts_;
  class Engine* engine_ = nullptr;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::vector<std::unique_ptr<Member>> members_;
};

class Engine {
 public:
  explicit Engine(const EngineOptions& opts);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Throws std::invalid_argument (bad options) or std::runtime_error (DPDK).
  std::unique_ptr<LocalGroup> create_local_group(const GroupOptions& opts);
  uint32_t polling_cores() const { return static_cast<uint32_t>(pollers_.size()); }
  // Times the polling cores slept for lack of work (they back off when idle).
  uint64_t idle_naps() const;

 private:
  friend class LocalGroup;
  void park_all();
  void unpark_all();
  EngineOptions opts_;
  std::vector<std::unique_ptr<engine::Poller>> pollers_;
  std::vector<unsigned> lcores_;
  uint32_t next_group_id_ = 1;
};

// Readable text for a failed operation.
std::string describe(const engine::CompletionRecord& rec);

}  // namespace lanecast
