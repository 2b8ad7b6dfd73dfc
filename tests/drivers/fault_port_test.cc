// FaultPort on ring ports, in virtual time: a seed reproduces every fault
// whatever the timing and the interleaving of links; each fault kind does
// what it says (Bernoulli loss at its rate, Gilbert-Elliott loss in bursts,
// reordering past later frames, duplicates as second mbufs, one corrupted
// byte past the link header and never in shared bytes, delay and jitter on
// the clock given); rules select by link, way and unicast/multicast; it takes
// only what it can hold; it frees what it holds; bad options are refused.
#include "drivers/fault/fault_port.h"

#include <gtest/gtest.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "drivers/ethernet.h"
#include "drivers/ring/ring_port.h"
#include "tests/drivers/test_env.h"

namespace lanecast::drivers {
namespace {

using test::frame_id;
using test::make_frame;
using test::pool;
using test::PoolGuard;
using test::fake_clock;
using test::mac;

PeerAddress group_mac() {
  const uint8_t m[6] = {0x03, 0x11, 0x22, 0x33, 0x44, 0x55};
  return ethernet::to_peer(m);
}
const PeerAddress kSelf = mac(1), kA = mac(2), kB = mac(3), kC = mac(4);

constexpr uint16_t kFrameBytes = 120;

FaultRule receive_all(const FaultProfile& f) {
  FaultRule r;
  r.faults = f;
  return r;
}

FaultPortOptions options(std::vector<FaultRule> rules, uint64_t seed = 7) {
  FaultPortOptions o;
  o.rules = std::move(rules);
  o.links = {kA, kB, kC};
  o.seed = seed;
  o.header_bytes = 20;
  o.clone_pool = pool();
  o.copy_pool = pool();
  o.clock = &fake_clock;
  o.reorder_hold_ns = 1'000'000'000;  // overtaken, never released by time, unless a test says
  return o;
}

// A ring port under a fault port: the test plays the switch on both rings.
struct Rig {
  RingPort* ring = nullptr;
  std::unique_ptr<FaultPort> port;
  explicit Rig(const FaultPortOptions& o, uint16_t lanes = 1, uint32_t ring_size = 4096) {
    static int n = 0;
    RingPort::Options ro;
    ro.mac = kSelf;
    ro.name = "fault_rig" + std::to_string(n++);
    ro.ring_size = ring_size;
    ro.lanes = lanes;
    auto inner = std::make_unique<RingPort>(ro);
    ring = inner.get();
    port = std::make_unique<FaultPort>(std::move(inner), o);
  }
  // A frame from `src` to `dst` arrives on `lane`.
  void arrive(const PeerAddress& src, const PeerAddress& dst, uint32_t id, uint16_t lane = 0) {
    rte_mbuf* m = make_frame(dst, src, id, kFrameBytes);
    ASSERT_NE(m, nullptr);
    ASSERT_EQ(rte_ring_enqueue(ring->rx_ring(lane), m), 0);
  }
  // What the port lets in now.
  std::vector<rte_mbuf*> receive(uint16_t lane = 0) {
    std::vector<rte_mbuf*> out;
    rte_mbuf* b[32];
    for (int turn = 0; turn < 1000; ++turn) {
      const uint16_t n = port->rx_burst(lane, b, 32);
      out.insert(out.end(), b, b + n);
      if (n == 0) break;
    }
    return out;
  }
  // What the port put on the wire so far.
  std::vector<rte_mbuf*> sent(uint16_t lane = 0) {
    std::vector<rte_mbuf*> out;
    void* b[64];
    unsigned n;
    while ((n = rte_ring_dequeue_burst(ring->tx_ring(lane), b, 64, nullptr)) > 0)
      for (unsigned i = 0; i < n; ++i) out.push_back(static_cast<rte_mbuf*>(b[i]));
    return out;
  }
};

std::vector<uint8_t> bytes_of(const rte_mbuf* m) {
  std::vector<uint8_t> b(m->pkt_len);
  const void* p = rte_pktmbuf_read(m, 0, m->pkt_len, b.data());
  if (p != b.data()) std::memcpy(b.data(), p, m->pkt_len);
  return b;
}

// The bytes make_frame wrote for (dst, src, id).
std::vector<uint8_t> expected_bytes(const PeerAddress& dst, const PeerAddress& src, uint32_t id) {
  rte_mbuf* m = make_frame(dst, src, id, kFrameBytes);
  std::vector<uint8_t> b = bytes_of(m);
  rte_pktmbuf_free(m);
  return b;
}

void free_all(std::vector<rte_mbuf*>& v) {
  for (rte_mbuf* m : v) rte_pktmbuf_free(m);
  v.clear();
}

bool same(const FaultStats& a, const FaultStats& b) {
  return a.lost == b.lost && a.burst_lost == b.burst_lost && a.reordered == b.reordered &&
         a.duplicated == b.duplicated && a.corrupted_header == b.corrupted_header &&
         a.corrupted_payload == b.corrupted_payload && a.delayed == b.delayed && a.no_buffer == b.no_buffer;
}

// ---------------------------------------------------------------- reproduction

FaultProfile every_fault() {
  FaultProfile f;
  f.loss = 0.05;
  f.burst_enter = 0.02;
  f.burst_leave = 0.3;
  f.reorder = 0.05;
  f.duplicate = 0.05;
  f.corrupt = 0.05;
  f.delay_ns = 10'000;
  f.jitter_ns = 20'000;
  return f;
}

struct Outcome {
  std::map<uint8_t, std::vector<std::vector<uint8_t>>> per_link;  // by the source's last byte, in order
  FaultStats stats;
};

// 3 links x 1000 frames through every fault. `interleave` picks the source
// order of the arrivals (each link's own order is kept), `burst` how many
// arrive between reads, `step_ns` the clock's step per frame.
Outcome run_links(uint64_t seed, uint32_t interleave, uint32_t burst, uint64_t step_ns) {
  test::fake_now = 1'000'000;
  Outcome out;
  Rig rig(options({receive_all(every_fault())}, seed));
  const PeerAddress srcs[3] = {kA, kB, kC};
  uint32_t next[3] = {0, 0, 0};
  const auto collect = [&] {
    std::vector<rte_mbuf*> got = rig.receive();
    for (rte_mbuf* m : got) out.per_link[rte_pktmbuf_mtod(m, uint8_t*)[11]].push_back(bytes_of(m));
    free_all(got);
  };
  for (uint32_t i = 0; i < 3000; ++i) {
    // A source that still has frames, chosen by a pattern of the interleave.
    uint32_t s = (i * (interleave + 1) + i / 7 * interleave) % 3;
    while (next[s] == 1000) s = (s + 1) % 3;
    rig.arrive(srcs[s], kSelf, s * 10000 + next[s]++);
    test::fake_now += step_ns;
    if (i % burst == burst - 1) collect();
  }
  for (int spin = 0; spin < 10; ++spin) {
    test::fake_now += 1'000'000'000;  // past every delay and hold
    collect();
  }
  EXPECT_EQ(rig.port->frames_held(), 0u);
  out.stats = rig.port->counts(FaultWay::Receive);
  return out;
}

TEST(FaultPort, ASeedReproducesEveryFaultWhateverTheTimingAndInterleaving) {
  PoolGuard guard;
  {
    const Outcome a = run_links(7, 0, 1, 1'000);
    const Outcome b = run_links(7, 1, 16, 5'000);
    const Outcome c = run_links(7, 2, 3, 50);
    EXPECT_EQ(a.per_link, b.per_link) << "a link's faults changed with the timing or the other links' frames";
    EXPECT_EQ(a.per_link, c.per_link);
    EXPECT_TRUE(same(a.stats, b.stats) && same(a.stats, c.stats));
    // Every kind happened.
    EXPECT_GT(a.stats.lost, 0u);
    EXPECT_GT(a.stats.burst_lost, 0u);
    EXPECT_GT(a.stats.reordered, 0u);
    EXPECT_GT(a.stats.duplicated, 0u);
    EXPECT_GT(a.stats.corrupted_header + a.stats.corrupted_payload, 0u);
    EXPECT_GT(a.stats.delayed, 0u);
    EXPECT_EQ(a.stats.no_buffer, 0u);
    const Outcome other = run_links(8, 0, 1, 1'000);
    EXPECT_NE(a.per_link, other.per_link) << "another seed, the same faults";
  }
  EXPECT_EQ(guard.now(), guard.start());
}

// ---------------------------------------------------------------- loss

// Ids of the frames lost when `n` frames from A pass through `f`.
std::vector<uint32_t> lost_ids(const FaultProfile& f, uint32_t n, FaultStats* stats) {
  test::fake_now = 0;
  Rig rig(options({receive_all(f)}));
  std::vector<bool> seen(n);
  for (uint32_t i = 0; i < n; ++i) {
    rig.arrive(kA, kSelf, i);
    if (i % 64 == 63 || i + 1 == n) {
      std::vector<rte_mbuf*> got = rig.receive();
      for (rte_mbuf* m : got) {
        EXPECT_FALSE(seen[frame_id(m)]) << "frame " << frame_id(m) << " twice";
        seen[frame_id(m)] = true;
      }
      free_all(got);
    }
  }
  *stats = rig.port->counts(FaultWay::Receive);
  std::vector<uint32_t> lost;
  for (uint32_t i = 0; i < n; ++i)
    if (!seen[i]) lost.push_back(i);
  return lost;
}

// Mean length of the runs of consecutive ids in `ids`.
double mean_run(const std::vector<uint32_t>& ids) {
  if (ids.empty()) return 0;
  uint32_t runs = 1;
  for (size_t i = 1; i < ids.size(); ++i)
    if (ids[i] != ids[i - 1] + 1) ++runs;
  return static_cast<double>(ids.size()) / runs;
}

TEST(FaultPort, BernoulliLossAtItsRateAndCounted) {
  PoolGuard guard;
  FaultProfile f;
  f.loss = 0.1;
  FaultStats s;
  const std::vector<uint32_t> lost = lost_ids(f, 20000, &s);
  EXPECT_EQ(s.lost, lost.size());
  EXPECT_EQ(s.burst_lost, 0u);
  EXPECT_GT(lost.size(), 1700u);
  EXPECT_LT(lost.size(), 2300u);
  EXPECT_LT(mean_run(lost), 1.25) << "independent losses rarely come in runs";
  EXPECT_EQ(guard.now(), guard.start());
}

TEST(FaultPort, GilbertElliottLosesInBursts) {
  PoolGuard guard;
  FaultProfile ge;
  ge.burst_enter = 0.01;
  ge.burst_leave = 0.25;  // bursts of 4 frames on average
  ge.burst_loss_bad = 1;
  FaultStats s;
  const std::vector<uint32_t> lost = lost_ids(ge, 20000, &s);
  EXPECT_EQ(s.burst_lost, lost.size());
  EXPECT_EQ(s.lost, 0u);
  // In the bad state 0.01 / 0.26 of the time: ~770 of 20000.
  EXPECT_GT(lost.size(), 450u);
  EXPECT_LT(lost.size(), 1200u);
  EXPECT_GT(mean_run(lost), 3.0) << "Gilbert-Elliott losses come in bursts";
  // Bernoulli at the same rate, for contrast.
  FaultProfile flat;
  flat.loss = static_cast<double>(lost.size()) / 20000;
  FaultStats s2;
  EXPECT_LT(mean_run(lost_ids(flat, 20000, &s2)), 1.2);
  EXPECT_EQ(guard.now(), guard.start());
}

// ---------------------------------------------------------------- reordering

TEST(FaultPort, ReorderedFramesComeAfterTheirGapOfLaterFrames) {
  PoolGuard guard;
  test::fake_now = 0;
  FaultProfile f;
  f.reorder = 0.1;
  f.reorder_gap = 3;
  Rig rig(options({receive_all(f)}));
  std::vector<uint32_t> order;
  for (uint32_t i = 0; i < 5000; ++i) {
    rig.arrive(kA, kSelf, i);
    if (i % 10 == 9) {
      std::vector<rte_mbuf*> got = rig.receive();
      for (rte_mbuf* m : got) order.push_back(frame_id(m));
      free_all(got);
    }
  }
  test::fake_now += 2'000'000'000;  // the last ones set aside go at their deadline
  std::vector<rte_mbuf*> got = rig.receive();
  for (rte_mbuf* m : got) order.push_back(frame_id(m));
  free_all(got);
  ASSERT_EQ(order.size(), 5000u);
  EXPECT_EQ(std::set<uint32_t>(order.begin(), order.end()).size(), 5000u) << "each frame exactly once";
  // A frame is held if a later one came before it; each held frame (but the
  // last few, released by time) came right after 3 later frames not held.
  std::set<uint32_t> held;
  uint32_t highest = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    if (k > 0 && order[k] < highest) held.insert(order[k]);
    highest = std::max(highest, order[k]);
  }
  EXPECT_EQ(held.size(), rig.port->counts(FaultWay::Receive).reordered);
  EXPECT_GT(held.size(), 350u);
  EXPECT_LT(held.size(), 650u);
  uint32_t checked = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    if (!held.count(order[k]) || order[k] > 4900) continue;
    uint32_t overtook = 0;
    for (size_t j = 0; j < k; ++j)
      if (order[j] > order[k] && !held.count(order[j])) ++overtook;
    EXPECT_EQ(overtook, 3u) << "frame " << order[k];
    ++checked;
  }
  EXPECT_GT(checked, 300u);
  EXPECT_EQ(guard.now(), guard.start());
}

TEST(FaultPort, AFrameSetAsideOnAQuietLinkGoesAtItsDeadline) {
  PoolGuard guard;
  test::fake_now = 5'000;
  FaultProfile f;
  f.reorder = 0.5;
  FaultPortOptions o = options({receive_all(f)});
  o.reorder_hold_ns = 200'000;
  Rig rig(o);
  // The first frame the seed sets aside, with nothing after it.
  uint32_t id = 0;
  for (; id < 64; ++id) {
    rig.arrive(kA, kSelf, id);
    std::vector<rte_mbuf*> got = rig.receive();
    const bool passed = !got.empty();
    free_all(got);
    if (!passed) break;
  }
  ASSERT_LT(id, 64u);
  EXPECT_EQ(rig.port->frames_held(), 1u);
  EXPECT_EQ(rig.port->held_until_ns(), test::fake_now + 200'000);
  test::fake_now += 199'999;
  EXPECT_TRUE(rig.receive().empty());
  test::fake_now += 1;
  std::vector<rte_mbuf*> got = rig.receive();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(frame_id(got[0]), id);
  EXPECT_EQ(rig.port->held_until_ns(), UINT64_MAX);
  free_all(got);
  EXPECT_EQ(guard.now(), guard.start());
}

// ---------------------------------------------------------------- duplication

TEST(FaultPort, DuplicatesAreSecondMbufsWithTheSameBytes) {
  PoolGuard guard;
  test::fake_now = 0;
  FaultProfile f;
  f.duplicate = 0.3;
  Rig rig(options({receive_all(f)}));
  std::map<uint32_t, std::vector<rte_mbuf*>> by_id;
  std::vector<rte_mbuf*> all;
  for (uint32_t i = 0; i < 1000; ++i) rig.arrive(kA, kSelf, i);
  for (int turn = 0; turn < 100; ++turn) {
    std::vector<rte_mbuf*> got = rig.receive();
    if (got.empty()) break;
    for (rte_mbuf* m : got) by_id[frame_id(m)].push_back(m);
    all.insert(all.end(), got.begin(), got.end());
  }
  const uint64_t dups = rig.port->counts(FaultWay::Receive).duplicated;
  EXPECT_EQ(by_id.size(), 1000u);
  EXPECT_EQ(all.size(), 1000u + dups);
  EXPECT_GT(dups, 200u);
  EXPECT_LT(dups, 400u);
  for (const auto& [id, copies] : by_id) {
    ASSERT_LE(copies.size(), 2u);
    if (copies.size() == 2) {
      EXPECT_NE(copies[0], copies[1]) << "a duplicate must be an mbuf of its own: the engine frees both";
      EXPECT_EQ(bytes_of(copies[0]), bytes_of(copies[1]));
    }
  }
  free_all(all);
  EXPECT_EQ(guard.now(), guard.start());
}

// ---------------------------------------------------------------- corruption

TEST(FaultPort, CorruptionFlipsOneByteOfTheFramePastItsLinkHeader) {
  PoolGuard guard;
  test::fake_now = 0;
  FaultProfile f;
  f.corrupt = 0.5;
  Rig rig(options({receive_all(f)}));
  for (uint32_t i = 0; i < 2000; ++i) rig.arrive(kA, kSelf, i);
  uint32_t corrupted = 0, in_header = 0, total = 0;
  for (int turn = 0; turn < 200; ++turn) {
    std::vector<rte_mbuf*> got = rig.receive();
    if (got.empty()) break;
    for (rte_mbuf* m : got) {
      ++total;
      const std::vector<uint8_t> have = bytes_of(m);
      // Nothing is lost or reordered: the n-th frame out is frame n (its id
      // may be the byte hit).
      std::vector<uint8_t> want = expected_bytes(kSelf, kA, total - 1);
      ASSERT_EQ(have.size(), want.size());
      uint32_t diff = 0, at = 0;
      for (size_t k = 0; k < have.size(); ++k)
        if (have[k] != want[k]) ++diff, at = static_cast<uint32_t>(k);
      EXPECT_LE(diff, 1u);
      if (diff == 1) {
        ++corrupted;
        EXPECT_GE(at, ethernet::kHeaderBytes) << "the link header is never touched: the frame goes where it went";
        if (at < ethernet::kHeaderBytes + 20) ++in_header;
      }
    }
    free_all(got);
  }
  EXPECT_EQ(total, 2000u);
  const FaultStats s = rig.port->counts(FaultWay::Receive);
  EXPECT_EQ(s.corrupted_header + s.corrupted_payload, corrupted);
  EXPECT_EQ(s.corrupted_header, in_header);
  EXPECT_GT(corrupted, 850u);
  EXPECT_LT(corrupted, 1150u);
  EXPECT_GT(s.corrupted_header, 0u);
  EXPECT_GT(s.corrupted_payload, s.corrupted_header);
  EXPECT_EQ(guard.now(), guard.start());
}

// The engine's frames: a header mbuf chained to a payload mbuf whose bytes
// the sender (and every receiver) shares. A corrupted copy must not change
// them for the others.
TEST(FaultPort, CorruptionNeverChangesBytesOthersShare) {
  PoolGuard guard;
  test::fake_now = 0;
  FaultProfile f;
  f.corrupt = 0.9;
  Rig rig(options({receive_all(f)}));
  std::vector<rte_mbuf*> payloads;
  for (uint32_t i = 0; i < 200; ++i) {
    rte_mbuf* head = make_frame(kSelf, kA, i, 34);
    rte_mbuf* body = rte_pktmbuf_alloc(pool());
    ASSERT_NE(head, nullptr);
    ASSERT_NE(body, nullptr);
    auto* p = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(body, 1000));
    std::memset(p, 0xA5, 1000);
    rte_mbuf_refcnt_update(body, 1);  // the sender keeps it
    payloads.push_back(body);
    ASSERT_EQ(rte_pktmbuf_chain(head, body), 0);
    ASSERT_EQ(rte_ring_enqueue(rig.ring->rx_ring(0), head), 0);
  }
  uint32_t copies = 0;
  for (int turn = 0; turn < 50; ++turn) {
    std::vector<rte_mbuf*> got = rig.receive();
    if (got.empty()) break;
    for (rte_mbuf* m : got)
      if (m->nb_segs == 1) ++copies;  // a corrupted frame whose shared part was hit: a flat copy
    free_all(got);
  }
  EXPECT_GT(copies, 100u);
  for (rte_mbuf* body : payloads) {
    const auto* p = rte_pktmbuf_mtod(body, const uint8_t*);
    EXPECT_TRUE(std::all_of(p, p + 1000, [](uint8_t b) { return b == 0xA5; })) << "the sender's payload changed";
    EXPECT_EQ(rte_mbuf_refcnt_read(body), 1);
    rte_pktmbuf_free(body);
  }
  EXPECT_EQ(guard.now(), guard.start());
}

// ---------------------------------------------------------------- delay

TEST(FaultPort, DelayAndJitterHoldFramesOnTheGivenClockInOrder) {
  PoolGuard guard;
  test::fake_now = 1'000'000;
  FaultProfile f;
  f.delay_ns = 100'000;
  f.jitter_ns = 50'000;
  Rig rig(options({receive_all(f)}));
  std::vector<uint64_t> arrived;                   // by id
  std::vector<std::pair<uint32_t, uint64_t>> out;  // id, time let out
  const auto collect = [&] {
    std::vector<rte_mbuf*> got = rig.receive();
    for (rte_mbuf* m : got) out.emplace_back(frame_id(m), test::fake_now);
    free_all(got);
    // Whatever is still held is due later: the engine may sleep until then.
    if (rig.port->frames_held() > 0) {
      EXPECT_GT(rig.port->held_until_ns(), test::fake_now);
    } else {
      EXPECT_EQ(rig.port->held_until_ns(), UINT64_MAX);
    }
  };
  for (uint32_t i = 0; i < 300; ++i) {
    rig.arrive(i % 2 ? kA : kB, kSelf, i);
    arrived.push_back(test::fake_now);
    collect();
    if (i == 0) {
      EXPECT_GE(rig.port->held_until_ns(), test::fake_now + 100'000);
      EXPECT_LE(rig.port->held_until_ns(), test::fake_now + 150'000);
    }
    test::fake_now += 1'000;
  }
  for (; test::fake_now < 2'000'000; test::fake_now += 1'000) collect();
  ASSERT_EQ(out.size(), 300u);
  uint32_t last[2] = {0, 0};
  bool first[2] = {true, true};
  for (const auto& [id, t] : out) {
    // Due 100..150 us after it came (an earlier frame of its link, due
    // later, holds it no longer than that either); read every 1 us.
    EXPECT_GE(t, arrived[id] + 100'000) << "frame " << id << " out before its delay";
    EXPECT_LE(t, arrived[id] + 151'000) << "frame " << id << " held past its delay and jitter";
    const int link = id % 2;
    if (!first[link]) {
      EXPECT_GT(id, last[link]) << "a link's frames leave in order";
    }
    first[link] = false;
    last[link] = id;
  }
  EXPECT_EQ(rig.port->counts(FaultWay::Receive).delayed, 300u);
  EXPECT_EQ(guard.now(), guard.start());
}

// ---------------------------------------------------------------- selection

FaultProfile delay_of(uint64_t us) {
  FaultProfile f;
  f.delay_ns = us * 1000;
  return f;
}

// Each class of frames gets a delay of its own: the delay says which rule
// applied.
TEST(FaultPort, RulesSelectTheLinkTheWayAndUnicastOrMulticast) {
  PoolGuard guard;
  test::fake_now = 0;
  std::vector<FaultRule> rules;
  FaultRule r;
  r.way = FaultWay::Receive;
  r.peer = kA;
  r.frames = FaultFrames::Unicast;
  r.faults = delay_of(100);
  rules.push_back(r);
  r.peer.reset();
  r.frames = FaultFrames::Multicast;
  r.faults = delay_of(200);
  rules.push_back(r);
  r.peer = kA;  // more specific than the one above for A's multicasts
  r.faults = delay_of(300);
  rules.push_back(r);
  r.way = FaultWay::Send;
  r.peer = kB;
  r.frames = FaultFrames::All;
  r.faults = delay_of(400);
  rules.push_back(r);
  Rig rig(options(rules));
  const PeerAddress g = group_mac();
  rig.arrive(kA, kSelf, 1);  // 100
  rig.arrive(kA, g, 2);      // 300
  rig.arrive(kB, kSelf, 4);  // none (before B's multicast: a link's frames leave in order)
  rig.arrive(kB, g, 3);      // 200
  rig.arrive(kC, kSelf, 5);  // none
  std::map<uint32_t, uint64_t> rx_at, tx_at;
  rte_mbuf* out[3] = {make_frame(kB, kSelf, 6, 64), make_frame(kC, kSelf, 7, 64), make_frame(g, kSelf, 8, 64)};
  ASSERT_EQ(rig.port->tx_burst(0, out, 3), 3);  // to B: 400; to C and the group: none
  for (; test::fake_now <= 500'000; test::fake_now += 10'000) {
    std::vector<rte_mbuf*> got = rig.receive();
    for (rte_mbuf* m : got) rx_at[frame_id(m)] = test::fake_now;
    free_all(got);
    got = rig.sent();
    for (rte_mbuf* m : got) tx_at[frame_id(m)] = test::fake_now;
    free_all(got);
  }
  EXPECT_EQ(rx_at, (std::map<uint32_t, uint64_t>{{1, 100'000}, {2, 300'000}, {3, 200'000}, {4, 0}, {5, 0}}));
  EXPECT_EQ(tx_at, (std::map<uint32_t, uint64_t>{{6, 400'000}, {7, 0}, {8, 0}}));
  EXPECT_EQ(rig.port->counts(FaultWay::Receive).delayed, 3u);
  EXPECT_EQ(rig.port->counts(FaultWay::Send).delayed, 1u);
  const PortStats s = rig.port->stats();
  EXPECT_EQ(s.rx_faults.delayed, 3u);
  EXPECT_EQ(s.tx_faults.delayed, 1u);
  EXPECT_EQ(guard.now(), guard.start());
}

TEST(FaultPort, SendSideLosesAndDuplicatesWhatItSends) {
  PoolGuard guard;
  test::fake_now = 0;
  FaultRule r;
  r.way = FaultWay::Send;
  r.faults.loss = 0.2;
  r.faults.duplicate = 0.2;
  Rig rig(options({r}));
  std::vector<uint32_t> ids;
  for (uint32_t i = 0; i < 2000; i += 20) {
    rte_mbuf* b[20];
    for (uint32_t k = 0; k < 20; ++k) b[k] = make_frame(kA, kSelf, i + k, 64);
    ASSERT_EQ(rig.port->tx_burst(0, b, 20), 20);
    std::vector<rte_mbuf*> got = rig.sent();
    for (rte_mbuf* m : got) ids.push_back(frame_id(m));
    free_all(got);
  }
  const FaultStats s = rig.port->counts(FaultWay::Send);
  EXPECT_EQ(ids.size(), 2000 - s.lost + s.duplicated);
  EXPECT_GT(s.lost, 300u);
  EXPECT_GT(s.duplicated, 250u);
  EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));
  EXPECT_EQ(rig.port->counts(FaultWay::Receive).lost, 0u);
  EXPECT_EQ(guard.now(), guard.start());
}

// ---------------------------------------------------------------- capacity

TEST(FaultPort, TakesOnlyWhatItCanHoldAndLosesNothingForIt) {
  PoolGuard guard;
  test::fake_now = 0;
  FaultRule r;
  r.way = FaultWay::Receive;
  r.faults = delay_of(1000);
  FaultRule s = r;
  s.way = FaultWay::Send;
  FaultPortOptions o = options({r, s});
  o.queue_frames = 64;
  Rig rig(o, 1, 256);
  for (uint32_t i = 0; i < 200; ++i) rig.arrive(kA, kSelf, i);
  EXPECT_TRUE(rig.receive().empty());
  EXPECT_LE(rig.port->frames_held(), 64u);
  // On the way out it takes what it can hold and the sender keeps the rest.
  std::vector<rte_mbuf*> pending;
  for (uint32_t i = 0; i < 200; ++i) pending.push_back(make_frame(kB, kSelf, 1000 + i, 64));
  const uint16_t took = rig.port->tx_burst(0, pending.data(), 200);
  EXPECT_LT(took, 200);
  pending.erase(pending.begin(), pending.begin() + took);
  std::vector<uint32_t> in, out;
  for (int turn = 0; turn < 100 && (in.size() < 200 || out.size() < 200); ++turn) {
    test::fake_now += 1'000'000;
    std::vector<rte_mbuf*> got = rig.receive();
    for (rte_mbuf* m : got) in.push_back(frame_id(m));
    free_all(got);
    if (!pending.empty()) {
      const uint16_t k = rig.port->tx_burst(0, pending.data(), static_cast<uint16_t>(pending.size()));
      pending.erase(pending.begin(), pending.begin() + k);
    }
    got = rig.sent();
    for (rte_mbuf* m : got) out.push_back(frame_id(m));
    free_all(got);
  }
  ASSERT_EQ(in.size(), 200u);
  ASSERT_EQ(out.size(), 200u);
  for (uint32_t i = 0; i < 200; ++i) {
    EXPECT_EQ(in[i], i);
    EXPECT_EQ(out[i], 1000 + i);
  }
  EXPECT_EQ(guard.now(), guard.start());
}

TEST(FaultPort, FreesEverythingItHoldsWhenDestroyed) {
  PoolGuard guard;
  test::fake_now = 0;
  {
    FaultProfile f;
    f.reorder = 0.3;
    f.duplicate = 0.3;
    f.delay_ns = 5'000'000;
    FaultRule s = receive_all(f);
    s.way = FaultWay::Send;
    Rig rig(options({receive_all(f), s}));
    for (uint32_t i = 0; i < 300; ++i) rig.arrive(kA, kSelf, i);
    for (int turn = 0; turn < 20; ++turn) EXPECT_TRUE(rig.receive().empty());
    rte_mbuf* b[32];
    for (uint32_t k = 0; k < 32; ++k) b[k] = make_frame(kB, kSelf, k, 64);
    EXPECT_EQ(rig.port->tx_burst(0, b, 32), 32);
    EXPECT_GT(rig.port->frames_held(), 300u);
    EXPECT_LT(guard.now(), guard.start());
  }
  EXPECT_EQ(guard.now(), guard.start());
}

// ---------------------------------------------------------------- refusals

void expect_refused(const FaultPortOptions& o, const std::string& words) {
  RingPort::Options ro;
  static int n = 0;
  ro.mac = kSelf;
  ro.name = "fault_bad" + std::to_string(n++);
  try {
    FaultPort p(std::make_unique<RingPort>(ro), o);
    ADD_FAILURE() << "accepted; wanted: " << words;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(FaultPort, RefusesBadOptionsNamingThem) {
  FaultProfile f;
  f.loss = 1.0;
  expect_refused(options({receive_all(f)}), "loss is 1.000000, out of range");
  f = {};
  f.burst_enter = 0.1;
  expect_refused(options({receive_all(f)}), "burst_leave");
  f = {};
  f.corrupt = -0.1;
  expect_refused(options({receive_all(f)}), "corrupt");
  f = {};
  f.reorder = 0.1;
  f.reorder_gap = 0;
  expect_refused(options({receive_all(f)}), "reorder_gap");
  f = {};
  f.delay_ns = 2'000'000'000;
  expect_refused(options({receive_all(f)}), "delay_ns");
  f = {};
  f.loss = 0.1;
  expect_refused(options({receive_all(f), receive_all(f)}), "select the same frames");
  FaultPortOptions o = options({receive_all(f)});
  o.clock = nullptr;
  expect_refused(o, "no clock");
  f = {};
  f.duplicate = 0.1;
  o = options({receive_all(f)});
  o.clone_pool = nullptr;
  expect_refused(o, "pool");
  o = options({});
  o.links = {kA, kA};
  expect_refused(o, "given twice");
}

}  // namespace
}  // namespace lanecast::drivers
