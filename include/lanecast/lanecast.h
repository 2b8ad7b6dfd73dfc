// lanecast's public C++ API.
//
//   lanecast::Engine engine({});                       // EAL, polling cores
//   auto group = engine.create_local_group(opts);      // p members, in-process fabric
//   auto done = group->member(r).broadcast(root, buf); // on every member
//   lanecast::Status s = done.wait();
//
// or, one member per process (each process of the group runs this with its
// own rank; apps/examples/join_and_broadcast.cc):
//
//   auto group = engine.join(lanecast::load_group_file("g.toml"), my_rank);
//   group->broadcast(root, buf).wait();
//
// broadcast() is collective: every member posts it with the same root and size;
// the root's buffer is sent, every other member's buffer is filled. A member's
// broadcasts complete in the order they were posted.
//
// Lifetimes: a Completion must not outlive the group whose member made it,
// and a group must not outlive its Engine. One Engine per process (DPDK's
// environment starts once per process and cannot restart).
//
// Threads: the engine's polling cores run the members; applications only post
// and wait. A Member, and every Completion it returned, is used by one
// application thread at a time (different members may be driven from
// different threads). Counters may be read from any thread. Engine and group
// creation and destruction happen on one thread, with no broadcast of that
// group being waited for elsewhere.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lanecast/counters.h"
#include "lanecast/group_spec.h"

namespace lanecast {

// A member's position in its group, 0..size-1.
using Rank = uint32_t;
inline constexpr Rank kNoRank = UINT32_MAX;

// The engine's own types stay behind declarations: an application names
// none of them. Tools of this repository that look inside (the bench, the
// tests) use engine/api/member_internals.h.
namespace engine {
class Node;
class Poller;
struct NodeCounters;
namespace stream {
class PublisherSide;
class DeliverySide;
}  // namespace stream
}  // namespace engine
namespace algos {
enum class Algo : uint8_t;
namespace autoselect {
class Rules;
struct Situation;
}  // namespace autoselect
}  // namespace algos
namespace drivers {
class Fabric;
}

// Why a broadcast failed.
enum class ErrorKind : uint8_t {
  None = 0,
  PeerSilent,   // a member stopped acknowledging past the peer timeout
  NoProgress,   // nothing arrived for the broadcast past the peer timeout
  Mismatch,     // the root's frames disagree with what this member posted (root, size, algorithm)
  Internal,     // the algorithm asked for something impossible (a bug)
  GroupBroken,  // a member of a group of processes is gone: re-form the group
  Evicted,      // this member was evicted from a stream for not taking its messages (StreamOptions::evict_after_ms)
};

struct Status {
  ErrorKind error = ErrorKind::None;
  std::string message;  // empty when ok
  // The member it names (silent, mismatching, or lost to the group), or kNoRank.
  Rank peer = kNoRank;
  bool ok() const { return error == ErrorKind::None; }
};

struct EngineOptions {
  uint32_t polling_cores = 0;  // 0: one per usable CPU but one, at least 1, at most 2
  uint32_t memory_mb = 2048;   // DPDK memory (anonymous pages unless hugepages)
  bool hugepages = false;
  std::string log_level = "error";
  uint64_t idle_sleep_max_ns = 50'000;  // 0: never sleep (a dedicated core)
  // A core sleeps after this long without work (engine/runtime/poller.h), or after
  // busy_spin_us while one of its members has a broadcast running.
  uint64_t idle_spin_us = 200;
  uint64_t busy_spin_us = 5'000;
  // Idle polls yield the CPU (sched_yield) instead of pausing: for several
  // engines sharing CPUs (member processes on one host, a testbed), where a
  // spinning poller holds the next hop's poller off for a scheduler slice.
  // Like MPI's mpi_yield_when_idle. Off for a core of one's own.
  bool yield_when_idle = false;
  // No polling cores: members make progress on the application's threads,
  // inside Completion::wait(), wait_for() and ready(), as MPI libraries do
  // inside their calls (one thread at a time drives the engine; others wait
  // for it). A process that is one member then runs one thread instead of
  // two: on a host with fewer CPUs than engines, no thread switch at every
  // completion. Between calls nothing moves: a member that stays away longer
  // than the group's peer timeout looks silent to its peers. polling_cores
  // is then ignored.
  bool progress_in_calls = false;
  // With progress_in_calls: once the members have gone this long without
  // a turn (no application thread called in), a thread of the engine looks
  // at them - a few turns of the loop while they find work: an ack owed, a
  // frame to send again, early frames of the next broadcast - and again
  // each interval while nobody calls in. So a process busy elsewhere
  // (computing, or blocked in another library's call) still answers its
  // peers, and a peer that waits on it never waits for ever; a process
  // that calls in often is never looked at. 0: never (nothing moves
  // between calls). At most 1 s.
  uint64_t idle_look_us = 0;
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
  // Payload per frame. 0: from the link - the fabric's 1400 bytes, or the
  // largest that fits every port's MTU (at most 8 KiB; 1428 at MTU 1500).
  uint32_t segment_bytes = 0;
  uint64_t max_message_bytes = 16u << 20;   // sizes buffers and pools
  uint32_t window = 128;                    // frames in flight per peer
  double peer_timeout_ms = 3000;            // silence that fails a broadcast: 1 .. 3600000 (kMaxTimeoutMs)
  // mcast_chain's options (Hoefler, Siebert & Rehm; docs/algorithms.md), for
  // groups whose algorithm is mcast_chain or auto: the root waits this long
  // before it multicasts (0: off; below peer_timeout_ms), and, when the seed
  // is nonzero, for one non-root member drawn per broadcast from it to tell
  // the root that it has posted the broadcast.
  double mcast_root_delay_us = 0;
  uint64_t mcast_sync_seed = 0;
  // mcast_chain's repair (algos/mcast_chain.h): true, on request - each node
  // asks its predecessor for what it missed, and every link carries each
  // segment about once; false, the paper's ring - twice.
  bool mcast_repair_on_request = true;
  // Real multicast where the ports can join group addresses (random per group,
  // engine/group/address_seed.h); false: always emulate (one datagram per member).
  bool multicast = true;
  // Each member drops this share of the multicast frames it receives, from a
  // generator seeded per member with mcast_loss_seed + rank
  // (drivers/loss/multicast_loss_port.h): the repair stage's test. [0, 1).
  double mcast_loss = 0;
  uint64_t mcast_loss_seed = 1;
  StreamOptions streams;                    // Member::open_stream (lanecast/group_spec.h)
  // The group's secret (docs/security.md): with one, every frame is sealed
  // and frames that do not open are dropped and counted. Null: no seals.
  std::shared_ptr<const AuthKey> key;
  FaultOptions faults;                      // injected on every member's port (lanecast/group_spec.h)
  FabricOptions fabric;                     // used when `ports` is empty
  // Latency between members, in the simulator's topology format
  // (docs/algorithms.md, config/topologies/): the fabric's per-pair latency,
  // and the spread `auto` sees. Empty: uniform.
  std::string topology_file;
  // DPDK devargs, one per member (e.g. "net_af_packet0,iface=veth0"): members
  // talk over these ports instead of the in-process fabric.
  std::vector<std::string> ports;
  // Each lane of a member sends at most this many Mbit/s (its link's rate):
  // keeps the queues of a rate-limited link short (engine/node/pacer.h). 0: off.
  double port_rate_mbit = 0;
  // Each lane finds its rate from the queueing delay its acks reveal and
  // from losses (docs/engine.md); port_rate_mbit, when given, is its ceiling.
  bool rate_control = false;
  // Bytes the link adds to each frame as its rate counts them: 24 on an
  // Ethernet wire (preamble, FCS, gap); 0 for a Linux tbf, which counts the
  // frame alone.
  uint32_t port_overhead_bytes = 24;
};

// A broadcast in progress on one member. Move-only: exactly one object owns
// the right to the outcome. Dropping it without waiting is allowed (the
// broadcast goes on; its outcome is discarded).
class Completion {
 public:
  Completion() = default;
  Completion(Completion&& o) noexcept { *this = std::move(o); }
  Completion& operator=(Completion&& o) noexcept;
  Completion(const Completion&) = delete;
  Completion& operator=(const Completion&) = delete;
  ~Completion();

  // True once the broadcast finished on this member (no waiting).
  bool ready();
  // Blocks (sleeping, not spinning) until finished; returns the outcome.
  Status wait();
  // As wait(), for at most `timeout`: no value if it has not finished by then.
  std::optional<Status> wait_for(std::chrono::nanoseconds timeout);
  // Blocks until this member no longer needs the application for the
  // broadcast: the buffer holds the message (the root's has been copied
  // out) and every frame the member owes so far went to its port - where an
  // MPI rank leaves MPI_Bcast. The buffer is the application's again; the
  // broadcast goes on in the engine (acks, resends, answers to a repair) -
  // driven by the polling cores, or by later calls and idle looks
  // (EngineOptions) - until it finishes, and the member's next broadcast
  // starts after that. Returns the outcome when it already finished (a
  // failure among them), else ok: a failure after this point fails the
  // group's next broadcast (its members are processes, fail-stop) or shows
  // in a later wait().
  Status wait_local();
  // Polling-core timestamps of this member's part, in ns (after ready()):
  // started, held the whole message, finished (held and acknowledged).
  uint64_t start_ns() const { return start_ns_; }
  uint64_t held_ns() const { return held_ns_; }
  uint64_t finish_ns() const { return finish_ns_; }

 private:
  friend class Member;
  Completion(class Member* m, uint32_t op) : member_(m), op_(op) {}
  void release();
  class Member* member_ = nullptr;
  uint32_t op_ = 0;
  bool done_ = false;
  Status status_;  // once done_
  uint64_t start_ns_ = 0, held_ns_ = 0, finish_ns_ = 0;
};

// CLOCK_MONOTONIC in nanoseconds: the time stamps of streams' messages, one
// clock for every process of a host.
uint64_t clock_ns();

// A message of a stream, as a member delivers it (docs/streams.md).
struct StreamMessage {
  Rank publisher = kNoRank;
  uint16_t stream = 0;
  uint64_t seq = 0;           // the publisher's sequence number on this stream, from 0
  uint64_t timestamp_ns = 0;  // clock_ns() at the publisher when it published
  // Valid until the next call to next() (or the handler's return).
  std::span<const std::byte> data;
};

enum class PublishResult : uint8_t {
  Ok,
  WouldBlock,  // the window is full (a slow member), or the publisher's ring: try again later
  TooLarge,    // over Publisher::max_message()
  Failed,      // the stream stopped: Publisher::status() says why
};

// One publisher's ordered stream to its whole group: every member (this one
// too) delivers its messages exactly once, in order. Move-only; used by one
// thread at a time. It must not outlive its group.
class Publisher {
 public:
  Publisher();
  Publisher(Publisher&&) noexcept;
  Publisher& operator=(Publisher&&) noexcept;
  ~Publisher();
  // Copies the message into the stream and returns at once: never waits
  // for the network, never blocks a polling core.
  PublishResult publish(std::span<const std::byte> message);
  // As publish(), trying again until `timeout` while the window is full.
  PublishResult publish_for(std::span<const std::byte> message, std::chrono::nanoseconds timeout);
  uint64_t published() const;  // messages accepted by publish()
  uint64_t stable() const;     // ... of which every member delivered
  // The largest message publish() takes: the group's max_message, half the
  // publisher's window (window_bytes) and half a delivery ring, and below
  // 2 GiB (larger messages go by broadcast).
  uint64_t max_message() const;
  uint16_t stream() const;
  Status status() const;       // ok while the stream runs

 private:
  friend class Member;
  std::unique_ptr<engine::stream::PublisherSide> side_;
};

class Member {
 public:
  // Posts this member's part of a broadcast of `buffer.size()` bytes from
  // `root`. `algo` overrides the group's algorithm for this broadcast ("auto"
  // lets the rules choose from the group and the size; every member chooses
  // alike). Throws std::invalid_argument for a root outside the group, a size
  // over the group's limit, or an unknown algorithm, and std::runtime_error
  // when 64 broadcasts are outstanding (posted, and their Completions alive
  // and not yet ready). The buffer must stay untouched until the completion
  // is ready.
  Completion broadcast(Rank root, std::span<std::byte> buffer, std::string_view algo = {});
  // The name of the algorithm a broadcast of `size` bytes runs when posted
  // with `algo` ("auto" resolved). Throws std::invalid_argument for an
  // unknown name.
  std::string resolve(std::string_view algo, uint64_t size) const;
  Rank rank() const;
  // This member's counters, by name (frames, bytes, retransmissions, drops
  // by reason...): every one, zeros too (a metrics scrape wants them all).
  std::vector<std::pair<std::string, uint64_t>> counters() const;

  // Streams (docs/streams.md). Opens this member's stream `index` (each
  // member numbers its own from 0, below StreamOptions::streams_per_member). Throws
  // std::invalid_argument for an index out of range or opened already.
  Publisher open_stream(uint16_t index = 0);
  // The next message of any stream delivered here, in each stream's order;
  // false when none is waiting. Its bytes stay valid until the next call.
  bool next(StreamMessage& out);
  // As next(), waiting (sleeping, not spinning) up to `timeout` for one.
  bool next_for(StreamMessage& out, std::chrono::nanoseconds timeout);
  // Instead of next(): the member's polling core calls `handler` for each
  // message as it is delivered (it must be quick and must not block). Call
  // before any stream starts; not with progress_in_calls engines.
  void on_message(std::function<void(const StreamMessage&)> handler);
  // Why this member's streams stopped; ok while they run.
  Status stream_status() const;
  // The streams this member takes part in, as its core last saw them.
  struct StreamStats {
    Rank publisher = kNoRank;
    uint16_t stream = 0;
    uint64_t delivered_messages = 0, delivered_bytes = 0;  // here
    uint64_t frames_held = 0;    // kept here until the members below deliver them
    Rank slowest = kNoRank;      // of this member and those below it in the tree: furthest behind
    uint64_t slowest_lag = 0;    // ... by this many frames of what this member holds
    bool evicted = false;        // this member left the stream for being slow (StreamOptions::evict_after_ms)
    uint32_t evicted_members = 0;  // members that left it so, as heard here
  };
  std::vector<StreamStats> streams() const;
  // Frames to and from each other member (every lane): first transmissions
  // of data and streams' frames, retransmissions, data accepted.
  struct PeerStats {
    Rank rank = kNoRank;
    uint64_t tx_data = 0, tx_retransmits = 0, rx_data = 0;
  };
  std::vector<PeerStats> peers() const;

 private:
  friend class Engine;
  friend class LocalGroup;
  friend class Group;
  friend class Completion;
  friend algos::Algo resolve_algo(const Member& m, std::string_view algo, uint64_t size);
  friend const engine::NodeCounters& node_counters(const Member& m);
  friend algos::autoselect::Situation situation_of(const Member& m, uint64_t size);
  Member(engine::Node* n, std::optional<algos::Algo> algo, const algos::autoselect::Rules* rules,
         double latency_spread)
      : node_(n), default_algo_(algo), rules_(rules), spread_(latency_spread) {}
  engine::Node* node_;
  std::optional<algos::Algo> default_algo_;  // empty: the group runs "auto"
  const algos::autoselect::Rules* rules_;
  double spread_;
  uint32_t next_op_ = 1;
  // Slots of the completion box (engine/node/completion_box.h) a live Completion
  // still needs: a slot is reused only when its op + 64 is posted.
  std::array<bool, 64> held_{};
  std::shared_ptr<engine::stream::DeliverySide> delivery_;  // next()'s view of the delivery ring
  uint64_t streams_opened_ = 0;  // bit i: stream i opened (indices below 64)
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
  GroupCaps caps() const;
  // Bytes of engine state per member beyond the application's buffers, by
  // part: the member's own state (channels, flight slabs, owed runs, segment
  // store, stash, datagram queue) and its share of the group's pools and
  // fabric. For the memory report of `lanecast bench --memory`.
  struct Footprint {
    // The member's own state, by part (engine/node/node.h, Node::Footprint).
    uint64_t channels = 0, flight = 0, owed = 0, store = 0, stash = 0, datagrams = 0, other = 0;
    uint64_t pools = 0, fabric = 0;  // its share of the group's
    uint64_t node() const { return channels + flight + owed + store + stash + datagrams + other; }
  };
  Footprint footprint_per_member() const;
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

// This process's member of a group whose members live in separate processes
// (one engine per host), found by the group's bootstrap (GroupSpec).
class Group {
 public:
  ~Group();
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;
  Member& member() { return *member_; }
  // As Member::broadcast: collective over every process of the group.
  Completion broadcast(Rank root, std::span<std::byte> buffer, std::string_view algo = {}) {
    return member_->broadcast(root, buffer, algo);
  }
  Rank rank() const;
  uint32_t size() const;
  // The incarnation the bootstrap agreed on (engine/wire/wire.h).
  uint32_t epoch() const;
  const GroupSpec& spec() const { return spec_; }
  PortCounters port_counters() const;
  GroupCaps caps() const;
  // Every member's link addresses as the bootstrap found them, a line per
  // (rank, lane): "rank R lane L 02:00:00:00:00:01".
  std::string endpoints() const;
  // Where joining spent its time: "pools 20.3 ms, port 3.1 ms, bootstrap 41.0
  // ms (init 35.2 ms, put + fence 5.1 ms, 16 records 0.2 ms), start 0.1 ms".
  std::string join_steps() const;
  // Where the member runs, a line per lane and one for its polling core:
  // "lane 0: iface v0, no PCI device: any CPU" (or "iface eth0, PCI
  // 0000:00:03.0, CPUs 0-7"), with two lanes ", on the member's core" or ",
  // its frames moved by lcore 2 on CPU 1", and "polling core: lcore 1 on CPU
  // 0 (of 2), the member's state on it". Each lane takes the engine's polling
  // core nearest its port (hwloc) that the fewest lanes took; lane 0's runs
  // the member.
  std::string placement() const;
  // DPDK memory this process's member of the group takes (its buffer pools),
  // to size EngineOptions::memory_mb before Engine::join. Throws
  // std::invalid_argument for a bad spec or rank, like join.
  static uint64_t memory_bytes(const GroupSpec& spec, Rank me);

 private:
  friend class Engine;
  Group() = default;
  GroupSpec spec_;
  class Engine* engine_ = nullptr;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::unique_ptr<Member> member_;
};

class Engine {
 public:
  explicit Engine(const EngineOptions& opts);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Throws std::invalid_argument (bad options) or std::runtime_error (DPDK).
  std::unique_ptr<LocalGroup> create_local_group(const GroupOptions& opts);
  // Joins the group `spec` as member `me`: opens this member's port (its
  // devargs in the spec), finds the other members by the spec's bootstrap,
  // and runs the member on the polling cores. Blocks until the group formed.
  // Throws std::invalid_argument for a bad spec or rank (pmix: a rank other
  // than the launcher's, a job of another size), std::runtime_error for a
  // port DPDK refuses or a bootstrap that failed (naming the ranks it never
  // heard, or one started with other group settings).
  std::unique_ptr<Group> join(const GroupSpec& spec, Rank me);
  // Threads polling for the engine (0 when it progresses in calls).
  uint32_t polling_cores() const { return static_cast<uint32_t>(lcores_.size()); }
  bool progress_in_calls() const { return opts_.progress_in_calls; }
  // Times the polling cores slept for lack of work (they back off when idle),
  // and turns of their loops so far.
  uint64_t idle_naps() const;
  uint64_t poll_iterations() const;
  // The polling cores' longest cycle - one turn's start to the next's, naps
  // left out - since the engine started or reset_longest_poll_cycle(), and
  // how many cycles so far passed 1 ms: how long the cores were away (the
  // kernel ran something else on their CPUs, or a turn took that long).
  // Whatever waited on a core waited that long too.
  uint64_t longest_poll_cycle_ns() const;
  uint64_t long_poll_cycles() const;
  void reset_longest_poll_cycle();
  // The CPU each polling core is pinned to (an application thread that must
  // keep time - a replay - keeps off them).
  std::vector<int> poller_cpus() const;
  // Whether this process can open a port on `lane` (DPDK devargs as a
  // member's lanes name them, or verbs:DEVICE:PORT): opens it and closes it
  // again. "" when it can, else why not - no such interface, a capability
  // the port needs (af_packet: CAP_NET_RAW), a device DPDK refuses. For
  // processes that must agree before a collective join (liblanecast-mpi).
  std::string try_lane(const std::string& lane);

 private:
  friend class LocalGroup;
  friend class Group;
  void park_all();
  void unpark_all();
  struct Looker;  // EngineOptions::idle_look_us's thread
  EngineOptions opts_;
  std::vector<std::unique_ptr<engine::Poller>> pollers_;
  std::vector<unsigned> lcores_;
  uint32_t next_group_id_ = 1;
  std::unique_ptr<Looker> looker_;
};

// DPDK devargs for an af_packet port on the kernel interface `iface`, the
// port's name made from `index` (each port a process opens needs a name of
// its own: net_af_packet<index>), its receive ring sized for the
// interface's MTU. Its frames pass the interface's queueing discipline (a tc
// shaper sees them) unless `bypass_qdisc`. Throws std::invalid_argument for
// a name no interface can have (empty, over 15 characters, or a character
// outside letters, digits and "_.-@": devargs are split on ',' and '=').
std::string af_packet_lane(const std::string& iface, uint32_t index, bool bypass_qdisc = false);

// This process's rank as the PMIx launcher that started it numbered it
// (mpirun, prterun, srun put PMIX_RANK in its environment, where PMIx_Init
// reads it); nullopt when no PMIx launcher started it. For joining a group
// whose bootstrap is "pmix" without being told the rank (join checks it
// against PMIx itself). Throws std::runtime_error if PMIX_RANK is malformed.
std::optional<Rank> pmix_rank();

}  // namespace lanecast
