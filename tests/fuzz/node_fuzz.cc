// libFuzzer target: the receive path. One input is a group of 2-3 members
// and a sequence of frames sent into the fabric from the attacker's port or
// forged from a member's own port (input format in fuzz_input.h), while a
// broadcast is posted on every member but its root (the frames meet a
// running operation) or on none (they meet the stash). Whatever the frames:
//   - nothing crashes, and no sanitizer speaks;
//   - the broadcast, and three real broadcasts of fresh bytes after it,
//     finish on every member (done or failed: no hang) within a bounded
//     virtual time;
//   - if no frame carried a member's address (and the cores never stalled),
//     every broadcast succeeded with the root's bytes: a non-member cannot
//     hurt the group;
//   - taking the group down returns every mbuf to its pool, and every
//     memzone (rings) to DPDK.
#include <rte_mbuf.h>
#include <rte_memzone.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "drivers/ethernet.h"
#include "engine/eal.h"
#include "tests/fuzz/fuzz_group.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/heap_frame.h"

namespace lanecast::fuzz {
namespace {

constexpr uint64_t kPeerTimeoutNs = 5'000'000;
constexpr uint32_t kMaxRounds = 2000;   // switch rounds the frames may ask for, per input
constexpr uint64_t kHealBytes = 20 * kNodeSegment;  // more frames per channel than a window
constexpr uint32_t kHealTries = 3;

GroupPools g_pools;
unsigned g_memzones = 0;
bool g_verbose = false;  // NODE_FUZZ_VERBOSE=1: what each member made of an input
// NODE_FUZZ_RECOVERY=1: one of the later broadcasts must also succeed after
// frames forged from members' addresses. Off by default: today a burst of
// frames forged with seqs ahead of the sender's (seed data_stash_overflow)
// wedges that channel for good - the receiver's cumulative ack passes the
// sender's next seq, and the sender rejects every ack after it.
bool g_recovery = false;

[[noreturn]] void die(const std::string& why) {
  std::fprintf(stderr, "node_fuzz: %s\n", why.c_str());
  std::abort();
}

unsigned memzones() {
  unsigned n = 0;
  rte_memzone_walk([](const rte_memzone*, void* arg) { ++*static_cast<unsigned*>(arg); }, &n);
  return n;
}

engine::NodeConfig config() {
  engine::NodeConfig c;
  c.group_id = kNodeGroup;
  c.epoch = kNodeEpoch;
  c.segment_bytes = kNodeSegment;
  c.max_message_bytes = 32 * kNodeSegment;
  c.window = 16;        // small: the fuzzer reaches a full window and out-of-window seqs
  c.stash_frames = 16;  // small: and a full stash
  c.peer_timeout_ns = kPeerTimeoutNs;
  c.rtt.initial_rto_ns = 200'000;
  c.rtt.min_rto_ns = 100'000;
  c.rtt.max_rto_ns = 2'000'000;
  c.ack_delay_ns = 50'000;
  return c;
}

// One broadcast's buffers and who has posted it.
struct Broadcast {
  uint32_t op;
  algos::Rank root;
  algos::Algo algo;
  std::vector<std::vector<std::byte>> bufs;
  std::vector<bool> posted;

  Broadcast(uint32_t members, uint32_t op_, algos::Rank root_, algos::Algo algo_, uint64_t size)
      : op(op_), root(root_), algo(algo_), bufs(members, std::vector<std::byte>(size)), posted(members, false) {
    for (size_t i = 0; i < size; ++i) bufs[root][i] = std::byte{node_byte(i, op)};
  }

  // Posts it on every member in `who` (a bit per rank) that has not yet.
  void post(FuzzGroup& g, uint32_t who = ~0u) {
    for (uint32_t r = 0; r < g.members(); ++r) {
      if (posted[r] || !(who >> r & 1)) continue;
      engine::Submission s;
      s.op = op;
      s.root = root;
      s.algo = algo;
      s.buffer = bufs[r].data();
      s.size = bufs[r].size();
      if (!g.node(r).submit(s)) die("a member refused a submission");
      posted[r] = true;
    }
  }
};

// Runs until the broadcast finished on every member: 1 us rounds, then long
// ones, so that every retransmission timer and deadline passes. False: some
// member never finished (a hang).
bool settle(FuzzGroup& g, uint32_t op) {
  for (int i = 0; i < 4000 && !g.all_ready(op); ++i) g.step(1000);
  for (int i = 0; i < 400 && !g.all_ready(op); ++i) g.step(kPeerTimeoutNs / 20);
  return g.all_ready(op);
}

// Every member finished without error and holds the root's bytes.
bool succeeded(FuzzGroup& g, const Broadcast& b) {
  for (uint32_t r = 0; r < g.members(); ++r) {
    if (g.node(r).completions().record(b.op).error != engine::OpError::None) return false;
    if (b.bufs[r] != b.bufs[b.root]) return false;
  }
  return true;
}

void report(FuzzGroup& g, uint32_t op) {
  for (uint32_t r = 0; r < g.members(); ++r) {
    const engine::CompletionBox& box = g.node(r).completions();
    if (box.ready(op))
      std::fprintf(stderr, "rank %u op %u error %d:", r, op, static_cast<int>(box.record(op).error));
    else
      std::fprintf(stderr, "rank %u op %u NOT FINISHED:", r, op);
    g.node(r).counters().for_each([](std::string_view name, uint64_t v) {
      if (v != 0 && name.substr(0, 3) != "tx_")
        std::fprintf(stderr, " %.*s=%llu", static_cast<int>(name.size()), name.data(), static_cast<unsigned long long>(v));
    });
    std::fprintf(stderr, "\n");
  }
}

// Sends one record's frame; true if it speaks for a member: sent from a
// member's own port, or carrying a member's source address.
bool send(FuzzGroup& g, uint8_t how, const uint8_t* bytes, size_t len, uint16_t lanes) {
  namespace eth = drivers::ethernet;
  const uint32_t port = (how & 3) < g.members() ? (how & 3) : g.attacker();
  const uint32_t to = ((how >> 2) & 3) % g.members();
  const uint16_t lane = (how & kNodeLane1) && lanes > 1 ? 1 : 0;
  std::vector<uint8_t> f;
  if (how & kNodeRaw) {
    f.assign(bytes, bytes + len);
  } else {
    f.resize(eth::kHeaderBytes + len);
    eth::write_header(f.data(), g.fabric().address(to), g.fabric().address(port));
    std::copy(bytes, bytes + len, f.begin() + eth::kHeaderBytes);
  }
  if (f.size() > eth::kHeaderBytes) {
    if (how & kNodeFixPayload) fix_payload(f.data() + eth::kHeaderBytes, f.size() - eth::kHeaderBytes);
    if (how & kNodeFixHeader) fix_header_crc(f.data() + eth::kHeaderBytes, f.size() - eth::kHeaderBytes);
  }
  rte_mbuf* m = heap_frame(g_pools.inject, f.data(), static_cast<uint16_t>(f.size()));
  if (m == nullptr) die("the inject pool ran dry");
  if (g.fabric().port(port).tx_burst(lane, &m, 1) != 1) rte_pktmbuf_free(m);  // ring full: lost
  if (port != g.attacker()) return true;
  // The attacker's own bytes may still name a member as the source.
  for (uint32_t r = 0; r < g.members(); ++r)
    if (f.size() >= eth::kHeaderBytes && eth::is_from(f.data(), g.fabric().address(r))) return true;
  return false;
}

void run(const uint8_t* data, size_t size) {
  const uint8_t scenario = data[0];
  const uint16_t lanes = (scenario & kNodeTwoLanes) ? 2 : 1;
  // Inputs of odd length run as a fail-stop group (members in processes,
  // failure notices; engine/node_failure.cc), even ones as one process's.
  engine::NodeConfig cfg = config();
  cfg.fail_stop = size % 2 == 1;
  FuzzGroup g(node_members(scenario), lanes, cfg, g_pools);
  Broadcast first(g.members(), 1, 0, node_algo(scenario), node_size(scenario));
  // Every member but the root is waiting for it: frames forged from the
  // root's port are the first the others see of this broadcast.
  if (!(scenario & kNodePostAfter)) first.post(g, ~1u);

  // Whether the broadcasts may fail: a frame spoke for a member, or the
  // cores were stalled (a long enough stall fails a broadcast by design).
  bool may_fail = false;
  uint32_t rounds = 0;
  for (size_t at = 1; at + kNodeRecordHeader <= size;) {
    const uint8_t how = data[at], then = data[at + 1];
    size_t len = data[at + 2] | size_t{data[at + 3]} << 8;
    at += kNodeRecordHeader;
    len = std::min({len, size - at, size_t{2000 - drivers::ethernet::kHeaderBytes}});
    may_fail |= send(g, how, data + at, len, lanes);
    at += len;
    if (then & kNodePost) first.post(g);
    if (then & kNodeWait) {
      g.wait(kPeerTimeoutNs / 4);
      may_fail = true;
    }
    for (uint32_t i = 0; i < (then & kNodeRoundsMask) && rounds < kMaxRounds; ++i, ++rounds) g.step(1000);
  }

  first.post(g);
  const bool settled = settle(g, 1);
  if (g_verbose) report(g, 1);
  if (!settled) die("broadcast 1 never finished on some member (hang)");
  if (!may_fail && !succeeded(g, first)) die("broadcast 1 failed though only the attacker sent");

  // The group must still work: three real broadcasts of fresh bytes, each
  // finishing on every member. A frame from a member's own address may
  // spoil them (it speaks for that member); the attacker's frames cannot.
  bool healed = false;
  for (uint32_t t = 0; t < kHealTries; ++t) {
    Broadcast b(g.members(), 2 + t, t % g.members(), algos::Algo::Chain, kHealBytes);
    b.post(g);
    const bool settled = settle(g, b.op);
    if (g_verbose) report(g, b.op);
    if (!settled) die("broadcast " + std::to_string(b.op) + " never finished on some member (hang)");
    const bool ok = succeeded(g, b);
    if (!ok && !may_fail) die("broadcast " + std::to_string(b.op) + " failed though only the attacker sent");
    healed |= ok;
  }
  if (g_recovery && !healed) die("the group did not recover: " + std::to_string(kHealTries) + " broadcasts failed");

  if (const std::string leaks = g.teardown(); !leaks.empty()) die("mbufs not back in their pools: " + leaks);
  if (memzones() != g_memzones) die("memzones leaked: " + std::to_string(memzones() - g_memzones));
}

}  // namespace
}  // namespace lanecast::fuzz

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  lanecast::engine::EalOptions o;
  o.memory_mb = 512;
  o.polling_cores = 1;
  lanecast::engine::eal_start(o);
  lanecast::fuzz::g_pools = lanecast::fuzz::GroupPools::make(4095);
  lanecast::fuzz::g_memzones = lanecast::fuzz::memzones();
  lanecast::fuzz::g_verbose = std::getenv("NODE_FUZZ_VERBOSE") != nullptr;
  lanecast::fuzz::g_recovery = std::getenv("NODE_FUZZ_RECOVERY") != nullptr;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size >= 1) lanecast::fuzz::run(data, size);
  return 0;
}
