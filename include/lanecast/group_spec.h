// A group as its members' processes know it: one member per process, each
// with its own ports, found by a bootstrap (engine/bootstrap/). Written by
// hand or read from a group file (config/groups/; parsed by engine/group/group_file.cc).
//
// Public: an application that joins a group names these types.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace lanecast {

// A group's secret (docs/security.md): 32 bytes every member holds, from
// which the keys of each epoch are derived; with one, every frame carries a
// tag and frames without a good one are dropped and counted. Never on a
// command line: from a file only its owner may read, from the environment,
// or from the application itself. Its bytes live on pages of their own that
// are left out of core dumps (MADV_DONTDUMP) and locked in memory where the
// process may lock them, and are wiped when the last reference goes.
class AuthKey {
 public:
  static constexpr size_t kBytes = 32;
  // 64 hex digits (blanks around them ignored); `what` names the source in
  // the error (std::invalid_argument), never the digits.
  static std::shared_ptr<const AuthKey> from_hex(std::string_view hex, const std::string& what);
  // A file holding the hex digits: a regular file, not a symbolic link,
  // owned by this process's user or by root, that nobody else may read or
  // write (mode 0600 or 0400). Throws std::invalid_argument naming the file
  // and what is wrong with it.
  static std::shared_ptr<const AuthKey> from_file(const std::string& path);
  // LANECAST_GROUP_KEY (the hex digits) or LANECAST_GROUP_KEY_FILE (a file
  // as above); null when neither is set, an error when both are. The hex
  // digits are wiped from the environment and unset as they are read (so
  // /proc/PID/environ and child processes never hold them); the key read
  // stays this process's answer from then on.
  static std::shared_ptr<const AuthKey> from_environment();
  // 32 fresh bytes from the kernel's random generator.
  static std::shared_ptr<const AuthKey> generate();

  ~AuthKey();
  // Each key on pages of its own, out of core dumps, locked where allowed.
  static void* operator new(size_t bytes);
  static void operator delete(void* p);
  AuthKey(const AuthKey&) = delete;
  AuthKey& operator=(const AuthKey&) = delete;
  const std::array<uint8_t, kBytes>& bytes() const { return bytes_; }
  std::string hex() const;  // for writing a key file; never logged
  // 16 hex digits that tell keys apart in messages and counters without
  // saying anything of the key (a keyed hash of nothing).
  std::string fingerprint() const;

 private:
  AuthKey() = default;
  std::array<uint8_t, kBytes> bytes_{};
};

// The most streams one member may publish (StreamOptions::streams_per_member):
// every member keeps a slot for each stream of each member, 1024 x 16 at most.
inline constexpr uint32_t kMaxStreamsPerMember = 16;

// Timeouts (GroupSpec's peer_timeout_ms and bootstrap_timeout_ms,
// GroupOptions' peer_timeout_ms) are milliseconds from 1 to 3600000 (1 ms to
// 1 hour): less is shorter than a retransmission timeout, more is a hang by
// another name - and keeps the conversion to nanoseconds far from overflow.
inline constexpr double kMinTimeoutMs = 1;
inline constexpr double kMaxTimeoutMs = 3'600'000;
inline constexpr const char* kTimeoutRange = "1 .. 3600000 ms (1 ms to 1 hour)";  // for messages
inline bool timeout_in_range(double ms) { return ms >= kMinTimeoutMs && ms <= kMaxTimeoutMs; }  // NaN: no

// Streams (Member::open_stream, docs/streams.md): ordered messages from one
// publisher to the whole group, many in flight, small ones batched.
struct StreamOptions {
  // The stream's tree: each member forwards every batch to this many others
  // (1: a pipelined chain, 2: a binary tree, nodes-1: linear). 0: from the
  // group's algorithm - 1 for chain, pipeline and mcast_chain, nodes-1 for
  // linear, 2 for the rest.
  uint32_t fanout = 0;
  // Frames of a stream each member keeps until everyone below it in the tree
  // delivered them (rounded up to a power of two, 16..65536).
  uint32_t window_batches = 1024;
  // A publisher's messages published and not yet delivered by every member:
  // publish() says WouldBlock past either limit. window_bytes also sizes the
  // publisher's ring and bounds one message.
  uint64_t window_bytes = 4u << 20;
  uint32_t window_messages = 1u << 20;
  // Streams each member may publish (Member::open_stream's index, below
  // this; 1..16). Every member keeps a slot for every stream any member may
  // publish - members x streams_per_member, each made on its stream's first
  // frame - so no stream ever finds the slots taken by others.
  uint32_t streams_per_member = 1;
  // Each member's ring of delivered messages not yet taken by next().
  uint64_t delivery_bytes = 4u << 20;
  // A member reports its subtree's progress to its parent after this long
  // (or after window_batches/8 batches), and every millisecond while the
  // stream is busy (a report is a datagram: a lost one is followed by the next).
  double report_us = 200;
  // Slow members (docs/streams.md). 0: a member whose application does not
  // take its messages holds the publisher back within the window, for as
  // long as it takes - nothing is lost. Else: a member whose delivery ring
  // stays full this long evicts itself from the stream - it stops
  // delivering (its application is told: stream_status()), keeps forwarding
  // to the members below it, no longer holds anyone back, and tells every
  // other member (StreamStats::evicted_members).
  double evict_after_ms = 0;
  // Streams over the port's multicast (docs/streams.md): the publisher
  // sends each batch once, to the group's address, and every other member
  // takes it from there; a member whose report has not moved past a batch
  // repair_us after it went out gets it again from the publisher, over the
  // reliable channel (as mcast_chain repairs a broadcast on request). The
  // stream's tree is then the star (every member reports to the publisher;
  // fanout is ignored). A publisher whose port cannot multicast sends each
  // batch to each member instead.
  bool multicast = false;
  double multicast_repair_us = 0;  // 0: ten report intervals (report_us)
};

// Faults injected on members' ports on purpose (drivers/fault/): what a
// network does sooner or later - loss, bursts of loss, reordering,
// duplication, corruption, delay - made to happen now, seeded and
// repeatable, to test and soak what is above the ports (docs/engine.md,
// "Faults on purpose"). Off unless a rule is given.
struct LinkFaults {
  double loss = 0;  // each frame lost on its own: 0 <= x < 1
  // Gilbert-Elliott bursts: a two-state chain stepped per frame of the link,
  // good -> bad with burst_enter and back with burst_leave, losing
  // burst_loss_good and burst_loss_bad of the frames in each state (Gilbert's
  // model: 0 and 1; mean burst 1 / burst_leave frames). Off while
  // burst_enter is 0; then burst_leave must be > 0.
  double burst_enter = 0;      // 0..1
  double burst_leave = 0;      // 0..1
  double burst_loss_good = 0;  // 0 <= x < 1
  double burst_loss_bad = 1;   // 0..1
  // A frame held back until reorder_gap later frames of its link went by
  // (or 200 us passed): 0 <= x < 1, gap 1..1000.
  double reorder = 0;
  uint32_t reorder_gap = 3;
  double dup = 0;      // a second copy of the frame: 0 <= x < 1
  double corrupt = 0;  // one byte of the frame past its link header flipped: 0 <= x < 1
  // Every frame held this long plus a uniform 0..jitter_us (a link's frames
  // stay in order): 0..1e6 each.
  double delay_us = 0;
  double jitter_us = 0;
};

// Which frames suffer `faults`. Of the rules that match a frame, the most
// specific wins: a named peer before any peer, then unicast or multicast
// before all frames, then a named member before every member; two rules may
// not select the same frames.
struct FaultRule {
  uint32_t member = UINT32_MAX;  // whose port applies it; UINT32_MAX: every member's
  bool send = false;             // false: frames the member receives; true: frames it sends
  // The other end: frames received from it, or sent to it (multicasts go to
  // the group's address, not to a peer). UINT32_MAX: any.
  uint32_t peer = UINT32_MAX;
  enum class Frames : uint8_t { All, Unicast, Multicast };
  Frames frames = Frames::All;
  LinkFaults faults;
};

struct FaultOptions {
  // Each member's port draws from this seed and its rank, and each link from
  // a stream of its own: a link's faults depend on the seed and that link's
  // frames, not on timing.
  uint64_t seed = 1;
  std::vector<FaultRule> rules;  // none: no faults
};

// One member of the group.
struct MemberSpec {
  uint32_t rank = 0;
  // Per lane: the DPDK devargs of this member's port on that lane, e.g.
  // "net_af_packet0,iface=v0,qdisc_bypass=0". Only the joining member's own
  // entries are opened; the others document the testbed.
  std::vector<std::string> lanes;
  // Per lane: its link address ("02:00:00:00:00:01"), for the static
  // bootstrap; empty for the others (they learn addresses on the wire).
  std::vector<std::string> macs;
  uint32_t site = 0;  // members of one site share a switch (index into site_latency_us)
};

// The "exchange" bootstrap: the application moves the members' endpoint
// records between its processes itself - an MPI library's allgather, a job
// launcher's store - and lanecast needs no group file addresses, wire
// discovery or PMIx. Engine::join calls it once, on the joining thread, with
// this member's record (at most kMaxEndpointRecordBytes); it returns every
// member's record, indexed by rank, as each member passed it. It is
// collective: every member of the group calls it once per join. It may
// throw (an exception leaves join unchanged: the join fails with it). The
// records come from other processes: lanecast checks every byte of them
// (a malformed, missing or foreign record fails the join naming the rank).
using EndpointExchange =
    std::function<std::vector<std::vector<std::byte>>(std::span<const std::byte> mine)>;
inline constexpr size_t kMaxEndpointRecordBytes = 256;

struct GroupSpec {
  std::string name;      // for messages
  uint32_t id = 1;       // carried by every frame: groups sharing a segment stay apart
  // The group's incarnation, carried by every frame: frames of another one
  // are dropped and counted (rx_wrong_epoch). 0: the bootstrap picks it (the
  // static bootstrap cannot: give it).
  uint32_t epoch = 0;
  std::string bootstrap = "static";  // "static", "discovery", "pmix" or "exchange"
  double bootstrap_timeout_ms = 10'000;
  // bootstrap "exchange": how the records travel (above). Not in group files.
  EndpointExchange exchange;
  std::vector<MemberSpec> members;   // indexed by rank, ranks 0..n-1
  uint16_t lanes = 1;
  std::string algo = "auto";
  // Rules for "auto" (config/auto.rules' format): empty = built in. Every
  // member must read the same rules - each chooses alone - so it is the
  // group file's, or given alike on every member's command line.
  std::string auto_rules_file;
  uint32_t segment_bytes = 0;         // 0: from the ports' MTU
  uint64_t max_message_bytes = 16u << 20;
  uint32_t window = 128;
  double peer_timeout_ms = 3000;
  double port_rate_mbit = 0;          // pace each lane to this (0: off)
  // Whether each lane finds its rate from the queueing delay its acks
  // reveal and from losses (engine/reliable/rate_control.h) instead of being
  // told it. Auto (a group file without `rate_control`): it does when no
  // port_rate_mbit is given - a user on a real network does not know the
  // bottleneck's rate - and paces at port_rate_mbit when one is. On: it
  // does, port_rate_mbit (if given) its ceiling. Off: port_rate_mbit alone
  // (0: no pacing).
  enum class RateControl : uint8_t { Auto, On, Off };
  RateControl rate_control = RateControl::Auto;
  bool finds_rate() const {
    return rate_control == RateControl::On || (rate_control == RateControl::Auto && port_rate_mbit == 0);
  }
  uint32_t port_overhead_bytes = 24;  // 24 on an Ethernet wire, 0 under tbf
  // One-way latency between sites in microseconds, sites x sites (empty:
  // uniform): the network's shape, which the algorithms use (use_sites) and
  // a testbed may emulate (emulate_latency).
  std::vector<std::vector<double>> site_latency_us;
  // The algorithms use the sites: hypercube in form-hypercube order over the
  // sites' latencies, multilane's trees built per site and chained across
  // them. false: rank order and one site (the topology-blind versions).
  bool use_sites = true;
  // Each member holds every frame from a member of another site for the
  // matrix's latency before taking it (drivers/delay/): two sites on one
  // switch, for testbeds of kernels without netem. Needs site_latency_us.
  bool emulate_latency = false;
  // Multicast (docs/groups.md): real where the ports can join the group's
  // random address, else emulated (false: always emulated). mcast_chain's
  // root delay and randomized synchronisation (Hoefler, Siebert & Rehm; see
  // GroupOptions). mcast_loss: this member drops that share of the multicast
  // frames it receives (seeded with mcast_loss_seed + rank), to exercise the
  // repair stage.
  bool multicast = true;
  double mcast_root_delay_us = 0;
  uint64_t mcast_sync_seed = 0;
  bool mcast_repair_on_request = true;  // mcast_repair: "request" (true) or "ring" (GroupOptions)
  double mcast_loss = 0;
  uint64_t mcast_loss_seed = 1;
  StreamOptions streams;
  // The group's secret (docs/security.md): `key` when the application
  // gives it, else the file the group file names (key_file), else the
  // environment (AuthKey::from_environment). None: frames carry no tags.
  std::shared_ptr<const AuthKey> key;
  std::string key_file;
  FaultOptions faults;  // group.faults: injected on this member's port (none by default)
  std::string source;  // the file it was read from, if any
};
// The key a member of `spec` runs with (the order above); null for none.
// Throws std::invalid_argument when a key file or the environment names a
// key that cannot be read or is malformed.
std::shared_ptr<const AuthKey> resolve_key(const GroupSpec& spec);

// Reads a group file (TOML; format in config/groups/README.md). Throws
// std::invalid_argument "FILE:LINE: what is wrong" for unknown keys, bad
// values and missing ones.
GroupSpec load_group_file(const std::string& path);
// The same from text; `name` stands for the file in messages.
GroupSpec parse_group_file(const std::string& text, const std::string& name);

}  // namespace lanecast
