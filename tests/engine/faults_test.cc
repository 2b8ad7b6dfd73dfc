// Whole groups on the in-process fabric with faults on every member's port
// (GroupOptions::faults, drivers/fault/): every algorithm and a stream
// deliver every byte exactly once, equal to the root's, under the soak's mix
// (5% loss, 2% reordering, 1% duplication, 0.5% corruption); the engine
// counts what the faults did under their reasons; rules pick members, links,
// ways and multicasts; delays are held on the engine's clock; bad options and
// group files are refused, naming what is wrong.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "algos/registry.h"
#include "lanecast/lanecast.h"
#include "engine/api/member_internals.h"
#include "tests/engine/group_env.h"

namespace lanecast {
namespace {

using namespace std::chrono_literals;
using test::broadcast_all;
using test::engine;
using test::fill;
using test::test_seed;

LinkFaults soak_mix() {
  LinkFaults f;
  f.loss = 0.05;
  f.reorder = 0.02;
  f.dup = 0.01;
  f.corrupt = 0.005;
  return f;
}

// One rule: every frame every member receives.
FaultOptions everywhere(const LinkFaults& f, uint64_t seed) {
  FaultOptions o;
  o.seed = seed;
  FaultRule r;
  r.faults = f;
  o.rules.push_back(r);
  return o;
}

FaultCounters sum_faults(LocalGroup& g) {
  FaultCounters t;
  for (Rank r = 0; r < g.size(); ++r)
    for (const FaultCounters& f : {g.port_counters(r).rx_faults, g.port_counters(r).tx_faults}) {
      t.lost += f.lost;
      t.burst_lost += f.burst_lost;
      t.reordered += f.reordered;
      t.duplicated += f.duplicated;
      t.corrupted_header += f.corrupted_header;
      t.corrupted_payload += f.corrupted_payload;
      t.delayed += f.delayed;
      t.no_buffer += f.no_buffer;
    }
  return t;
}

uint64_t counter(LocalGroup& g, std::string_view name) {
  uint64_t n = 0;
  for (Rank r = 0; r < g.size(); ++r)
    node_counters(g.member(r)).for_each([&](std::string_view k, uint64_t v) {
      if (k == name) n += v;
    });
  return n;
}

class EveryAlgorithmUnderFaults : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryAlgorithmUnderFaults, DeliversEveryByteExactlyOnce) {
  const uint64_t seed = test_seed();
  SCOPED_TRACE("algo " + GetParam() + " seed " + std::to_string(seed) + " (LANECAST_SEED replays)");
  std::mt19937_64 rng(seed);
  constexpr uint32_t p = 8;
  GroupOptions o;
  o.nodes = p;
  o.algo = GetParam();
  o.max_message_bytes = 256 << 10;
  o.faults = everywhere(soak_mix(), seed);
  auto g = engine().create_local_group(o);
  uint64_t expected = 0;
  const uint64_t sizes[] = {1, 1399, 1400, 1401, 64 << 10, 256 << 10};
  for (size_t i = 0; i < std::size(sizes); ++i) {
    const uint64_t size = sizes[i];
    const Rank root = static_cast<Rank>(i * 3 % p);
    SCOPED_TRACE("size " + std::to_string(size) + " root " + std::to_string(root));
    std::vector<std::vector<std::byte>> bufs(p, std::vector<std::byte>(size, std::byte{0x5A}));
    fill(bufs[root], rng);
    ASSERT_EQ(broadcast_all(*g, root, bufs), "");
    for (Rank r = 0; r < p; ++r) ASSERT_TRUE(bufs[r] == bufs[root]) << "rank " << r;
    expected += size * (p - 1);
  }
  // Exactly once: each receiver took each byte into its buffer once.
  EXPECT_EQ(counter(*g, "delivered_bytes"), expected);
  const FaultCounters f = sum_faults(*g);
  EXPECT_GT(f.lost, 0u);
  EXPECT_GT(f.reordered, 0u);
  EXPECT_EQ(f.no_buffer, 0u);
  // Corruption the faults made, the engine's checks caught and counted
  // (one byte flipped: a CRC-32C always sees it); none was delivered, or
  // the bytes above would differ.
  const uint64_t corrupted = f.corrupted_header + f.corrupted_payload;
  const uint64_t caught = counter(*g, "bad_header_crc") + counter(*g, "bad_payload_crc") + counter(*g, "bad_version") +
                          counter(*g, "bad_type") + counter(*g, "too_short") + counter(*g, "bad_length");
  EXPECT_LE(caught, corrupted);
  EXPECT_GT(counter(*g, "tx_retransmits"), 0u);
}

std::vector<std::string> all_algorithms() {
  std::vector<std::string> names;
  for (const auto& a : algos::algorithms()) names.emplace_back(a.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Faults, EveryAlgorithmUnderFaults, ::testing::ValuesIn(all_algorithms()),
                         [](const auto& info) { return info.param; });

// Over every algorithm above each kind of fault happens somewhere; here, on
// one group and many broadcasts, each does, and the engine counts what each
// did to it: duplicates acknowledged again, corruption dropped by reason.
TEST(Faults, EachKindHappensAndTheEngineCountsItsReason) {
  const uint64_t seed = test_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  GroupOptions o;
  o.nodes = 6;
  o.algo = "bintree";
  o.max_message_bytes = 1 << 20;
  LinkFaults f = soak_mix();
  f.corrupt = 0.02;
  f.dup = 0.03;
  o.faults = everywhere(f, seed);
  auto g = engine().create_local_group(o);
  for (int i = 0; i < 6; ++i) {
    std::vector<std::vector<std::byte>> bufs(6, std::vector<std::byte>(300'000));
    fill(bufs[i % 6], rng);
    ASSERT_EQ(broadcast_all(*g, static_cast<Rank>(i % 6), bufs), "") << "broadcast " << i;
    ASSERT_TRUE(test::verified(bufs, static_cast<Rank>(i % 6)));
  }
  const FaultCounters c = sum_faults(*g);
  EXPECT_GT(c.lost, 0u);
  EXPECT_GT(c.reordered, 0u);
  EXPECT_GT(c.duplicated, 0u);
  EXPECT_GT(c.corrupted_header, 0u);
  EXPECT_GT(c.corrupted_payload, 0u);
  EXPECT_GT(counter(*g, "rx_duplicate"), 0u);
  EXPECT_GT(counter(*g, "bad_header_crc"), 0u);
  EXPECT_GT(counter(*g, "bad_payload_crc"), 0u);
}

// A stream under the mix: every member delivers every message once, in
// order, with the publisher's bytes.
TEST(Faults, AStreamDeliversEveryMessageOnceInOrder) {
  const uint64_t seed = test_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  constexpr uint32_t p = 6;
  GroupOptions o;
  o.nodes = p;
  o.algo = "binary";
  o.max_message_bytes = 1 << 20;
  o.streams.window_bytes = 1 << 20;
  o.faults = everywhere(soak_mix(), seed);
  auto g = engine().create_local_group(o);
  const auto message = [](uint64_t seq, std::vector<std::byte>& m) {
    m.resize(1 + (seq * 2654435761u) % 3000);
    uint64_t x = seq * 0x9E3779B97F4A7C15ULL + 1;
    for (auto& b : m) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      b = static_cast<std::byte>(x);
    }
  };
  constexpr uint64_t kMessages = 3000;
  struct Tally {
    std::atomic<uint64_t> next{0};
    std::string error;
    std::vector<std::byte> want;
  };
  std::vector<Tally> tallies(p);
  for (Rank r = 0; r < p; ++r)
    g->member(r).on_message([&, r](const StreamMessage& m) {
      Tally& t = tallies[r];
      if (!t.error.empty()) return;
      const uint64_t seq = t.next.load(std::memory_order_relaxed);
      message(seq, t.want);
      if (m.seq != seq || m.data.size() != t.want.size() || !std::equal(t.want.begin(), t.want.end(), m.data.begin()))
        t.error = "message " + std::to_string(m.seq) + " where " + std::to_string(seq) + " was due, or its bytes differ";
      else
        t.next.store(seq + 1, std::memory_order_release);
    });
  Publisher pub = g->member(2).open_stream(0);
  std::vector<std::byte> msg;
  for (uint64_t s = 0; s < kMessages; ++s) {
    message(s, msg);
    ASSERT_EQ(pub.publish_for(msg, 30s), PublishResult::Ok) << "message " << s << ": " << pub.status().message;
  }
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  for (Rank r = 0; r < p; ++r)
    while (tallies[r].next.load() < kMessages && tallies[r].error.empty() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(1ms);
  for (Rank r = 0; r < p; ++r) {
    EXPECT_EQ(tallies[r].error, "") << "rank " << r;
    EXPECT_EQ(tallies[r].next.load(), kMessages) << "rank " << r;
    EXPECT_EQ(node_counters(g->member(r)).streams.stream_msgs_delivered.get(), kMessages) << "rank " << r << ": exactly once";
  }
  EXPECT_GT(sum_faults(*g).lost, 0u);
}

// Rules pick frames: member 3 loses frames from member 2 only; member 1
// duplicates what it sends to member 2; member 5 delays the multicasts it
// receives. Everyone else's port is left alone.
TEST(Faults, RulesPickMembersLinksWaysAndMulticasts) {
  std::mt19937_64 rng(test_seed());
  GroupOptions o;
  o.nodes = 6;
  o.algo = "linear";
  o.max_message_bytes = 1 << 20;
  FaultRule lossy;
  lossy.member = 3;
  lossy.peer = 2;
  lossy.faults.loss = 0.3;
  FaultRule dup;
  dup.member = 1;
  dup.send = true;
  dup.peer = 2;
  dup.faults.dup = 0.5;
  FaultRule slow;
  slow.member = 5;
  slow.frames = FaultRule::Frames::Multicast;
  slow.faults.delay_us = 300;
  o.faults.rules = {lossy, dup, slow};
  auto g = engine().create_local_group(o);
  for (Rank root : {2u, 1u, 0u}) {
    for (const char* algo : {"linear", "mcast_chain"}) {
      std::vector<std::vector<std::byte>> bufs(6, std::vector<std::byte>(100'000));
      fill(bufs[root], rng);
      ASSERT_EQ(broadcast_all(*g, root, bufs, algo), "") << "root " << root << " " << algo;
      ASSERT_TRUE(test::verified(bufs, root));
    }
  }
  for (Rank r = 0; r < 6; ++r) {
    const PortCounters c = g->port_counters(r);
    SCOPED_TRACE("rank " + std::to_string(r));
    EXPECT_EQ(c.rx_faults.lost > 0, r == 3);
    EXPECT_EQ(c.tx_faults.duplicated > 0, r == 1);
    EXPECT_EQ(c.rx_faults.delayed > 0, r == 5);
    EXPECT_EQ(c.rx_faults.duplicated + c.tx_faults.lost + c.rx_faults.corrupted_payload, 0u);
  }
  // Member 1's duplicates reached member 2 and were acknowledged again.
  EXPECT_GT(node_counters(g->member(2)).rx_duplicate.get(), 0u);
}

// Delays on every frame: the members' cores sleep only until the next held
// frame is due (held_until_ns), and a chain of 4 takes at least its three
// hops' delays. Timed by the test's clock around the calls: a member stamps
// held_ns with its turn's clock reading, taken before the port read the
// frame - on a loaded host a core that stalls between the two makes held_ns
// early by the stall (4.8 ms for three 2 ms hops, once, in CI).
TEST(Faults, DelayedFramesAreHeldOnTheEnginesClock) {
  GroupOptions o;
  o.nodes = 4;
  o.algo = "chain";
  o.max_message_bytes = 64 << 10;
  LinkFaults f;
  f.delay_us = 2000;
  f.jitter_us = 500;
  o.faults = everywhere(f, 3);
  auto g = engine().create_local_group(o);
  std::mt19937_64 rng(test_seed());
  for (int i = 0; i < 5; ++i) {
    std::vector<std::vector<std::byte>> bufs(4, std::vector<std::byte>(5000));
    fill(bufs[0], rng);
    std::vector<Completion> done(4);
    for (Rank r = 1; r < 4; ++r) done[r] = g->member(r).broadcast(0, bufs[r]);
    const auto posted = std::chrono::steady_clock::now();
    done[0] = g->member(0).broadcast(0, bufs[0]);
    for (Rank r = 0; r < 4; ++r) ASSERT_TRUE(done[r].wait().ok());
    const auto held = std::chrono::steady_clock::now();
    ASSERT_TRUE(test::verified(bufs, 0));
    // A lower bound, not a timing: three hops of at least 2 ms each.
    EXPECT_GE(held - posted, 6ms);
  }
  EXPECT_GT(sum_faults(*g).delayed, 0u);
}

TEST(Faults, BadOptionsAreRefusedNamingWhatIsWrong) {
  const auto refused = [](const FaultOptions& f, const std::string& words) {
    GroupOptions o;
    o.nodes = 4;
    o.max_message_bytes = 4096;
    o.faults = f;
    try {
      engine().create_local_group(o);
      ADD_FAILURE() << "accepted; wanted: " << words;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  LinkFaults f;
  f.loss = 1;
  refused(everywhere(f, 1), "group: faults: rule 0: loss is 1, out of range; allowed 0 <= x < 1");
  f = {};
  f.burst_enter = 0.1;
  refused(everywhere(f, 1), "burst_leave is 0");
  f = {};
  f.reorder = 0.1;
  f.reorder_gap = 0;
  refused(everywhere(f, 1), "reorder_gap is 0");
  f = {};
  f.delay_us = 2e6;
  refused(everywhere(f, 1), "delay_us is 2e+06");
  FaultOptions two = everywhere(soak_mix(), 1);
  two.rules.push_back(two.rules[0]);
  refused(two, "rules 0 and 1 select the same frames");
  FaultOptions outside = everywhere(soak_mix(), 1);
  outside.rules[0].member = 4;
  refused(outside, "member 4 is not in the group (ranks 0..3)");
  outside.rules[0].member = 1;
  outside.rules[0].peer = 1;
  refused(outside, "peer 1 is the member itself");
  outside.rules[0].peer = 2;
  outside.rules[0].send = true;
  outside.rules[0].frames = FaultRule::Frames::Multicast;
  refused(outside, "a send rule for peer 2 sees no multicasts");
}

// [group.faults] in a group file: its keys and links, and each mistake
// named with its line.
TEST(Faults, GroupFileFaults) {
  const std::string head =
      "[group]\nname = \"f\"\nepoch = 1\n"
      "[group.faults]\nseed = 9\nloss = 0.05\nreorder = 0.02\nreorder_gap = 5\ndup = 0.01\ncorrupt = 0.005\n"
      "delay_us = 20\njitter_us = 5\nburst_enter = 0.001\nburst_leave = 0.3\n"
      "[[group.faults.link]]\nmember = 1\ndirection = \"send\"\npeer = 0\nframes = \"unicast\"\nloss = 0.5\n";
  std::string members;
  for (int r = 0; r < 3; ++r)
    members += "[[member]]\nrank = " + std::to_string(r) + "\nlanes = [\"net_null" + std::to_string(r) +
               "\"]\nmacs = [\"02:00:00:00:00:0" + std::to_string(r + 1) + "\"]\n";
  const GroupSpec g = parse_group_file(head + members, "f.toml");
  ASSERT_EQ(g.faults.rules.size(), 2u);
  EXPECT_EQ(g.faults.seed, 9u);
  const FaultRule& every = g.faults.rules[0];
  EXPECT_EQ(every.member, UINT32_MAX);
  EXPECT_FALSE(every.send);
  EXPECT_EQ(every.faults.loss, 0.05);
  EXPECT_EQ(every.faults.reorder_gap, 5u);
  EXPECT_EQ(every.faults.burst_leave, 0.3);
  EXPECT_EQ(every.faults.jitter_us, 5);
  const FaultRule& link = g.faults.rules[1];
  EXPECT_EQ(link.member, 1u);
  EXPECT_TRUE(link.send);
  EXPECT_EQ(link.peer, 0u);
  EXPECT_EQ(link.frames, FaultRule::Frames::Unicast);
  EXPECT_EQ(link.faults.loss, 0.5);

  const auto refused = [&](const std::string& faults, const std::string& words) {
    try {
      parse_group_file("[group]\nname = \"f\"\nepoch = 1\n" + faults + members, "f.toml");
      ADD_FAILURE() << "accepted: " << faults;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  refused("[group.faults]\nloss = 1.5\n", "f.toml:5: group.faults.loss is 1.5, out of range; allowed 0 <= x < 1");
  refused("[group.faults]\nlos = 0.1\n", "f.toml:5: unknown key 'los' in [group.faults]");
  refused("[group.faults]\nreorder_gap = 2.5\n", "f.toml:5: group.faults.reorder_gap must be an integer");
  refused("[group.faults]\nburst_enter = 0.1\n", "f.toml:5: group.faults.burst_enter is 0.1 but burst_leave is 0");
  refused("[group.faults]\ndup = \"lots\"\n", "f.toml:5: group.faults.dup must be a number, not a string");
  refused("[group.faults]\n[[group.faults.link]]\ndirection = \"up\"\n", "f.toml:6: group.faults.link.direction \"up\"");
  refused("[group.faults]\n[[group.faults.link]]\nframes = \"some\"\n", "f.toml:6: group.faults.link.frames \"some\"");
  refused("[group.faults]\n[[group.faults.link]]\nmember = 7\nloss = 0.1\n",
          "f.toml:6: group.faults.link.member 7 is not a member; allowed 0..2");
  refused("[group.faults]\n[[group.faults.link]]\nmember = 1\npeer = 1\n", "f.toml:7: group.faults.link.peer 1 is the member itself");
  refused("[group.faults]\n[[group.faults.link]]\ndirection = \"send\"\npeer = 1\nframes = \"multicast\"\nloss = 0.1\n",
          "f.toml:5: [[group.faults.link]]: a send rule for peer 1 sees no multicasts");
  refused("[group.faults]\nloss = 0.1\n[[group.faults.link]]\ndup = 0.1\n",
          "f.toml:6: [[group.faults.link]] selects the same frames as the [group.faults] keys");
  refused("[group.faults]\n[[group.faults.link]]\npeer = 2\n[[group.faults.link]]\npeer = 2\n",
          "f.toml:7: [[group.faults.link]] selects the same frames as the rule on line 5");
  try {
    parse_group_file("[group]\nname = \"f\"\nepoch = 1\nfaults = 3\n" + members, "f.toml");
    ADD_FAILURE() << "faults = 3 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("f.toml:4: group.faults must be a table"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace lanecast
