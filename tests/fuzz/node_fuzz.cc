// libFuzzer target: the receive path. One input is a group of 2-3 members,
// with or without a group key, and a sequence of frames sent into the
// fabric from the attacker's port or forged from a member's own port - or
// replays of frames the members really sent earlier in the run, to whom
// they went or to another member, changed or not (input format in
// fuzz_input.h) - while a broadcast is posted on every member but its root
// (the frames meet a running operation) or on none (they meet the stash).
// Whatever the frames:
//   - nothing crashes, and no sanitizer speaks;
//   - the broadcast, and two real broadcasts of fresh bytes after it (from
//     other roots), finish on every member (done or failed: no hang) within
//     a bounded virtual time, and at least one of the two succeeds: a
//     forged frame may spoil a broadcast, never a channel for good;
//   - unless the cores stalled, every broadcast succeeds with the root's
//     bytes when no frame spoke for a member (a non-member cannot hurt the
//     group) - and, in a group with a key, whatever the frames: a member's
//     MAC and rank, garbage seals and replays of its real frames buy the
//     attacker nothing;
//   - with a key, every frame the attacker made that reached a member's
//     seal check is refused there and counted (rx_unsealed, rx_bad_tag,
//     rx_replayed, rx_stale_counter), and no more refusals are counted than
//     the attacker's frames explain (rx_bad_payload_seal included);
//   - taking the group down returns every mbuf to its pool, and every
//     memzone (rings) to DPDK.
#include <rte_mbuf.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "drivers/ethernet.h"
#include "tests/fuzz/fuzz_group.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/heap_frame.h"

namespace lanecast::fuzz {
namespace {

namespace eth = drivers::ethernet;
using Bytes = std::vector<uint8_t>;

constexpr uint64_t kPeerTimeoutNs = 5'000'000;
constexpr uint32_t kMaxRounds = 400;    // switch rounds the records may ask for, per input
constexpr uint64_t kRoundMostNs = 20'000;   // a round: to the next timer, 1 to 20 us
// The records' rounds move time at most this far: well within the peer
// timeout, so members waiting for a root that posts after the records
// never give up on it (only a stall, kNodeWait, may make them).
constexpr uint64_t kRecordsNs = kPeerTimeoutNs / 2;
constexpr uint64_t kSettleNs = 20 * kPeerTimeoutNs;  // a broadcast's bound, failures and retries included
constexpr uint32_t kMaxSettleRounds = 20'000;
constexpr uint64_t kHealBytes = 20 * kNodeSegment;  // more frames per channel than a window
constexpr uint32_t kHealTries = 2;
constexpr size_t kTapFrames = 256;      // frames each member's tap keeps for replays

// One of the later broadcasts must also succeed after frames forged from
// members' addresses in a group without a key: a forged frame may spoil the
// broadcast it meets, never the channel for good (forged acks over lost
// frames are answered with fillers, data ahead of the window with an ack at
// once: engine/reliable/). With a key such frames never open. NODE_FUZZ_NO_RECOVERY
// turns the check off, to look at a finding without it.
bool g_recovery = true;

// One broadcast's buffers and who has posted it.
struct Broadcast {
  uint32_t op;
  algos::Rank root;
  algos::Algo algo;
  std::vector<Bytes> bufs;
  std::vector<bool> posted;

  Broadcast(uint32_t members, uint32_t op_, algos::Rank root_, algos::Algo algo_, uint64_t size)
      : op(op_), root(root_), algo(algo_), bufs(members, Bytes(size)), posted(members, false) {
    fill_bytes(bufs[root].data(), size, [op = op_](size_t i) { return node_byte(i, op); });
  }

  // Posts it on every member in `who` (a bit per rank) that has not yet.
  void post(FuzzGroup& g, uint32_t who = ~0u) {
    for (uint32_t r = 0; r < g.members(); ++r) {
      if (posted[r] || !(who >> r & 1)) continue;
      engine::Submission s;
      s.op = op;
      s.root = root;
      s.algo = algo;
      s.buffer = reinterpret_cast<std::byte*>(bufs[r].data());
      s.size = bufs[r].size();
      if (!g.node(r).submit(s)) die("a member refused a submission");
      posted[r] = true;
    }
  }

  // Every member finished without error and holds the root's bytes.
  bool succeeded(FuzzGroup& g) const {
    for (uint32_t r = 0; r < g.members(); ++r) {
      if (g.node(r).completions().record(op).error != engine::OpError::None) return false;
      if (bufs[r] != bufs[root]) return false;  // bytes: one memcmp
    }
    return true;
  }
};

// Runs until the broadcast finished on every member, each round as far as
// the next timer, so every retransmission timer and deadline passes. False:
// some member never finished (a hang).
bool settle(FuzzGroup& g, uint32_t op) {
  const uint64_t deadline = g.now() + kSettleNs;
  for (uint32_t i = 0; i < kMaxSettleRounds && !g.all_ready(op) && g.now() < deadline; ++i)
    g.step(g.next_round_ns(kPeerTimeoutNs / 20));
  return g.all_ready(op);
}

void report(FuzzGroup& g, uint32_t op) {
  g.print_counters([&](uint32_t r) {
    const engine::CompletionBox& box = g.node(r).completions();
    return "op " + std::to_string(op) +
           (box.ready(op) ? " error " + std::to_string(static_cast<int>(box.record(op).error)) : " NOT FINISHED");
  });
}

uint64_t seal_refusals(FuzzGroup& g) {
  uint64_t n = 0;
  for (uint32_t r = 0; r < g.members(); ++r) {
    const engine::NodeCounters& c = g.node(r).counters();
    n += c.rx_unsealed.get() + c.rx_bad_tag.get() + c.rx_replayed.get() + c.rx_stale_counter.get() +
         c.rx_bad_payload_seal.get();
  }
  return n;
}

// The attacker: sends each record's frame and keeps what it predicts the
// members make of them.
class Attacker {
 public:
  Attacker(FuzzGroup& g, uint16_t lanes, bool keyed) : g_(g), lanes_(lanes), keyed_(keyed) {}

  // A frame of the input's bytes (the lanecast header on, or with `raw` the
  // whole frame).
  void send(uint8_t how, const uint8_t* bytes, size_t len) {
    const uint32_t port = (how & 3) < g_.members() ? (how & 3) : g_.attacker();
    Bytes f;
    if (how & kNodeRaw) {
      f.assign(bytes, bytes + len);
    } else {
      f.resize(eth::kHeaderBytes + len);
      eth::write_header(f.data(), g_.fabric().address(destination(how)), g_.fabric().address(port));
      std::copy(bytes, bytes + len, f.begin() + eth::kHeaderBytes);
    }
    emit(how, port, std::move(f), /*genuine=*/false);
  }

  // Frame `index` of those the members sent (their taps, rank 0's first),
  // its lanecast header on XORed with `bytes`, to whom it went (raw) or to
  // the record's destination with the sender's MAC kept.
  void replay(uint8_t how, uint16_t index, const uint8_t* bytes, size_t len) {
    size_t total = 0;
    for (uint32_t r = 0; r < g_.members(); ++r) total += g_.tap(r).captured().size();
    if (total == 0) return;
    size_t i = index % total;
    uint32_t r = 0;
    while (i >= g_.tap(r).captured().size()) i -= g_.tap(r++).captured().size();
    Bytes f = g_.tap(r).captured()[i].bytes;
    if (!(how & kNodeRaw) && f.size() >= eth::kHeaderBytes) {
      const drivers::PeerAddress to = g_.fabric().address(destination(how));
      std::memcpy(f.data(), to.bytes, 6);
    }
    for (size_t k = 0; k < len && eth::kHeaderBytes + k < f.size(); ++k) f[eth::kHeaderBytes + k] ^= bytes[k];
    const uint32_t port = (how & 3) < g_.members() ? (how & 3) : g_.attacker();
    emit(how, port, std::move(f), /*genuine=*/true);
  }

  // A frame spoke for a member (its port, its source address): without a
  // key it may fail a broadcast.
  bool spoke_for_member() const { return spoke_for_member_; }
  // Seal refusals the frames must account for: at least the forged frames
  // that reached a seal check (each is refused there), at most those and
  // every copy of a replay or a frame to a group address (each may be
  // refused once by every member).
  uint64_t must_refuse() const { return g_.fabric().counters().queue_drops == 0 ? forged_checked_ : 0; }
  uint64_t may_refuse() const { return forged_checked_ + may_refuse_; }

 private:
  uint32_t destination(uint8_t how) const { return ((how >> 2) & 3) % g_.members(); }

  void emit(uint8_t how, uint32_t port, Bytes f, bool genuine) {
    const uint16_t lane = (how & kNodeLane1) && lanes_ > 1 ? 1 : 0;
    if (f.size() > eth::kHeaderBytes) {
      if (how & kNodeFixPayload) fix_payload(f.data() + eth::kHeaderBytes, f.size() - eth::kHeaderBytes);
      if (how & kNodeFixHeader) fix_header_crc(f.data() + eth::kHeaderBytes, f.size() - eth::kHeaderBytes);
    }
    bool member_source = port != g_.attacker();
    for (uint32_t r = 0; r < g_.members(); ++r)
      member_source |= f.size() >= eth::kHeaderBytes && eth::is_from(f.data(), g_.fabric().address(r));
    spoke_for_member_ |= member_source;
    if (!keyed_ || !g_.send(port, lane, f)) return;  // unkeyed: nothing to predict; a full ring: lost
    if (f.size() >= eth::kHeaderBytes && eth::is_group(f.data())) {
      may_refuse_ += g_.members();
    } else if (const uint32_t to = seal_checked_at(f); to != algos::kNoRank) {
      if (genuine) may_refuse_ += 1;
      else forged_checked_ += 1;
    }
  }

  // The member whose seal check a unicast frame meets: everything the
  // receive path checks before the seal holds (engine/node/node_rx.cc) - or none.
  uint32_t seal_checked_at(const Bytes& f) {
    if (f.size() < eth::kHeaderBytes || f.size() > g_.fabric().options().max_frame_bytes) return algos::kNoRank;
    uint32_t to = 0;
    while (to < g_.members() && !g_.fabric().port(to).accepts(f.data())) ++to;
    if (to == g_.members()) return algos::kNoRank;
    rte_mbuf* m = heap_frame(fuzz_process().pools.inject, f.data(), static_cast<uint16_t>(f.size()));
    if (m == nullptr) die("the inject pool ran dry");
    wire::Parsed p;
    const wire::Verdict v = wire::parse(m, eth::kHeaderBytes, &p);
    rte_pktmbuf_free(m);
    if (v != wire::Verdict::Ok || p.group != kNodeGroup || p.type == wire::FrameType::Hello || p.epoch != kNodeEpoch ||
        p.src >= g_.members() || p.src == to || !eth::is_from(f.data(), g_.fabric().address(p.src)))
      return algos::kNoRank;
    return to;
  }

  FuzzGroup& g_;
  uint16_t lanes_;
  bool keyed_;
  bool spoke_for_member_ = false;
  uint64_t forged_checked_ = 0, may_refuse_ = 0;
};

void run(const uint8_t* data, size_t size) {
  if (size < kNodePrefix) return;
  const uint8_t scenario = data[0], group = data[1];
  const uint16_t lanes = (scenario & kNodeTwoLanes) ? 2 : 1;
  const bool keyed = (group & kNodeKeyed) != 0;
  engine::NodeConfig cfg = small_group_config(kPeerTimeoutNs);
  cfg.fail_stop = (group & kNodeFailStop) != 0;  // members in processes, failure notices (engine/node/node_failure.cc)
  if (keyed) cfg.auth = group_keys();
  FuzzGroup g(node_members(scenario), lanes, cfg, fuzz_process().pools, kTapFrames);
  Attacker attacker(g, lanes, keyed);
  Broadcast first(g.members(), 1, 0, node_algo(scenario), node_size(scenario));
  // Every member but the root is waiting for it: frames forged from the
  // root's port are the first the others see of this broadcast.
  if (!(scenario & kNodePostAfter)) first.post(g, ~1u);

  // The cores stalled: a long enough stall fails a broadcast by design.
  bool stalled = false;
  uint32_t rounds = 0;
  uint64_t moved = 0;  // virtual time the rounds took
  for (size_t at = kNodePrefix; at + kNodeRecordHeader <= size;) {
    const uint8_t how = data[at], then = data[at + 1];
    const uint16_t field = static_cast<uint16_t>(data[at + 2] | data[at + 3] << 8);
    at += kNodeRecordHeader;
    if (field & kNodeReplay) {
      if (at + 2 > size) break;
      const uint16_t index = static_cast<uint16_t>(data[at] | data[at + 1] << 8);
      at += 2;
      const size_t len = std::min<size_t>(field & ~kNodeReplay, size - at);
      attacker.replay(how, index, data + at, len);
      at += len;
    } else {
      const size_t len = std::min({size_t{field}, size - at, size_t{2000 - eth::kHeaderBytes}});
      attacker.send(how, data + at, len);
      at += len;
    }
    if (then & kNodePost) first.post(g);
    if (then & kNodeWait) {
      g.wait(kPeerTimeoutNs / 4);
      stalled = true;
    }
    for (uint32_t i = 0; i < (then & kNodeRoundsMask) && rounds < kMaxRounds && moved < kRecordsNs; ++i, ++rounds) {
      const uint64_t ns = g.next_round_ns(std::min(kRoundMostNs, kRecordsNs - moved));
      g.step(ns);
      moved += ns;
    }
  }
  // Whether the broadcasts may fail: the cores stalled, or - without a key -
  // a frame spoke for a member.
  const bool may_fail = stalled || (!keyed && attacker.spoke_for_member());
  const char* culprit = keyed ? "though the group has a key" : "though only the attacker sent";

  first.post(g);
  const bool settled = settle(g, 1);
  if (fuzz_process().verbose) report(g, 1);
  if (!settled) die("broadcast 1 never finished on some member (hang)");
  if (!may_fail && !first.succeeded(g)) die(std::string("broadcast 1 failed ") + culprit);

  // The group must still work: two real broadcasts of fresh bytes, from the
  // last rank and the one before it, each finishing on every member.
  // Without a key, a frame from a member's own address may spoil them (it
  // speaks for that member); the attacker's frames cannot.
  bool healed = false;
  for (uint32_t t = 0; t < kHealTries; ++t) {
    Broadcast b(g.members(), 2 + t, g.members() - 1 - t, algos::Algo::Chain, kHealBytes);
    b.post(g);
    const bool settled = settle(g, b.op);
    if (fuzz_process().verbose) report(g, b.op);
    if (!settled) die("broadcast " + std::to_string(b.op) + " never finished on some member (hang)");
    const bool ok = b.succeeded(g);
    if (!ok && !may_fail) die("broadcast " + std::to_string(b.op) + " failed " + culprit);
    healed |= ok;
  }
  if (g_recovery && !healed)
    die("the group did not recover: " + std::to_string(kHealTries) + " broadcasts failed");

  if (keyed) {
    const uint64_t refused = seal_refusals(g);
    if (refused < attacker.must_refuse() || refused > attacker.may_refuse())
      die("seal refusals counted: " + std::to_string(refused) + ", the attacker's frames explain " +
          std::to_string(attacker.must_refuse()) + " to " + std::to_string(attacker.may_refuse()));
  }
  g.teardown_clean();
}

}  // namespace
}  // namespace lanecast::fuzz

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  lanecast::fuzz::start_fuzz_process("node_fuzz", "NODE_FUZZ_VERBOSE");
  lanecast::fuzz::g_recovery = std::getenv("NODE_FUZZ_NO_RECOVERY") == nullptr;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  lanecast::fuzz::run(data, size);
  return 0;
}
