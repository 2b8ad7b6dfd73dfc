// Streams on the in-process fabric through the public API: every member
// delivers every message of every stream exactly once, in order, equal to
// what was published - small ones batched, large ones in pieces - with loss,
// with two publishers at once, beside broadcasts, with a member that does
// not keep up (the publisher is held back, nothing dropped), and with the
// core calling a handler instead of next().
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <random>
#include <thread>
#include <vector>

#include "lanecast/lanecast.h"
#include "tests/engine/group_env.h"

namespace lanecast {
namespace {

using namespace std::chrono_literals;
using test::engine;

// The message `seq` of a publisher: its size from `sizes`, its bytes from a
// hash of (publisher, seq, index), so any member can check it alone.
std::vector<std::byte> message(Rank publisher, uint64_t seq, const std::vector<uint32_t>& sizes) {
  std::vector<std::byte> m(sizes[seq % sizes.size()]);
  uint64_t x = (uint64_t{publisher} << 40) ^ (seq * 0x9E3779B97F4A7C15ULL) ^ 0x5bd1e995;
  for (auto& b : m) {
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ULL;
    b = static_cast<std::byte>(x >> 56);
  }
  return m;
}

struct Check {
  std::vector<uint64_t> next_seq;  // per publisher rank
  uint64_t delivered = 0;
  std::string error;
  void take(const StreamMessage& m, const std::vector<uint32_t>& sizes) {
    if (!error.empty()) return;
    if (m.publisher >= next_seq.size()) {
      error = "publisher " + std::to_string(m.publisher);
      return;
    }
    if (m.seq != next_seq[m.publisher]) {
      error = "from " + std::to_string(m.publisher) + ": seq " + std::to_string(m.seq) + " where " +
              std::to_string(next_seq[m.publisher]) + " was due";
      return;
    }
    const auto want = message(m.publisher, m.seq, sizes);
    if (m.data.size() != want.size() || !std::equal(want.begin(), want.end(), m.data.begin())) {
      error = "from " + std::to_string(m.publisher) + ": message " + std::to_string(m.seq) + " differs (" +
              std::to_string(m.data.size()) + " bytes, " + std::to_string(want.size()) + " sent)";
      return;
    }
    ++next_seq[m.publisher];
    ++delivered;
  }
};

struct StreamRun {
  std::vector<Rank> publishers;
  uint64_t messages = 2000;  // per publisher
  std::vector<uint32_t> sizes{64};
};

// A member's streams' status, the member it names, and the counters that
// say which rule failed them - what a failure report needs to be read.
std::string why_streams_failed(LocalGroup& g, Rank r) {
  const Status st = g.member(r).stream_status();
  if (st.ok()) return "";
  std::string out = st.message + ", naming rank " + std::to_string(st.peer);
  // Every stream counter and the channel's drops and resends: a failure
  // that comes once in a few runs must be readable from its one report.
  for (const auto& [name, v] : g.member(r).counters())
    if (v != 0 && (name.find("stream") != std::string::npos || name == "rto_timeouts" || name == "rx_duplicate" ||
                   name == "rx_out_of_window" || name == "tx_retransmits" || name.rfind("rx_malformed", 0) == 0))
      out += ", " + name + " " + std::to_string(v);
  return out;
}

// Publishes `run` on a group and drains every member with next() on a
// thread each; returns "" or what went wrong, per member.
std::string run_stream(LocalGroup& g, const StreamRun& run, std::chrono::seconds limit = 60s) {
  const uint32_t n = g.size();
  std::vector<Check> checks(n);
  for (auto& c : checks) c.next_seq.assign(n, 0);
  const uint64_t want = run.messages * run.publishers.size();
  std::atomic<bool> give_up{false};
  std::vector<std::thread> readers;
  for (Rank r = 0; r < n; ++r)
    readers.emplace_back([&, r] {
      StreamMessage m;
      while (checks[r].delivered < want && checks[r].error.empty() && !give_up.load()) {
        if (g.member(r).next_for(m, 10ms)) checks[r].take(m, run.sizes);
      }
    });
  std::vector<std::thread> writers;
  std::vector<std::string> pub_errors(run.publishers.size());
  for (size_t i = 0; i < run.publishers.size(); ++i)
    writers.emplace_back([&, i] {
      Publisher p = g.member(run.publishers[i]).open_stream(0);
      for (uint64_t s = 0; s < run.messages && !give_up.load(); ++s) {
        const auto msg = message(run.publishers[i], s, run.sizes);
        const PublishResult res = p.publish_for(msg, 20s);
        if (res != PublishResult::Ok) {
          pub_errors[i] = "publish " + std::to_string(s) + ": result " + std::to_string(int(res)) + " " +
                          p.status().message;
          return;
        }
      }
    });
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (auto& w : writers) w.join();
  for (Rank r = 0; r < n; ++r) {
    while (checks[r].delivered < want && checks[r].error.empty() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(1ms);
  }
  give_up = true;
  for (auto& t : readers) t.join();
  std::string out;
  for (auto& e : pub_errors)
    if (!e.empty()) out += e + "; ";
  for (Rank r = 0; r < n; ++r) {
    if (!checks[r].error.empty()) out += "rank " + std::to_string(r) + ": " + checks[r].error + "; ";
    else if (checks[r].delivered != want)
      out += "rank " + std::to_string(r) + ": " + std::to_string(checks[r].delivered) + " of " +
             std::to_string(want) + " delivered (" + why_streams_failed(g, r) + "); ";
  }
  return out;
}

GroupOptions options(uint32_t nodes, uint32_t fanout) {
  GroupOptions o;
  o.nodes = nodes;
  o.segment_bytes = 1400;
  o.max_message_bytes = 1 << 20;
  o.streams.fanout = fanout;
  o.streams.window_batches = 256;
  o.streams.window_bytes = 1 << 20;
  o.streams.delivery_bytes = 1 << 20;
  return o;
}

class Fanouts : public ::testing::TestWithParam<uint32_t> {};

TEST_P(Fanouts, EveryMemberDeliversSmallAndLargeMessagesInOrder) {
  auto g = engine().create_local_group(options(8, GetParam()));
  StreamRun run;
  run.publishers = {3};
  run.messages = 3000;
  // Batched (0..200 bytes), one piece short of a frame, in pieces (up to 64 KiB).
  run.sizes = {64, 0, 1, 200, 1383, 1384, 1385, 3000, 64, 65536, 17, 64};
  EXPECT_EQ(run_stream(*g, run), "");
}

INSTANTIATE_TEST_SUITE_P(Streams, Fanouts, ::testing::Values(1u, 2u, 7u));

uint64_t counter(LocalGroup& g, Rank r, const std::string& name) {
  for (const auto& [n, v] : g.member(r).counters())
    if (n == name) return v;
  return 0;
}

// Two publishers at once (ranks 0 and 4 of 6), messages batched and in pieces.
StreamRun two_publishers() {
  StreamRun run;
  run.publishers = {0, 4};
  run.messages = 3000;
  run.sizes = {64, 1000, 5000, 32};
  return run;
}

TEST(Streams, TwoPublishersWithLossOnEveryLink) {
  GroupOptions o = options(6, 2);
  o.fabric.loss = 0.02;
  o.fabric.seed = test::test_seed();
  auto g = engine().create_local_group(o);
  EXPECT_EQ(run_stream(*g, two_publishers(), 120s), "");
  uint64_t resent = 0;
  for (Rank r = 0; r < g->size(); ++r) resent += counter(*g, r, "tx_retransmits");
  EXPECT_GT(resent, 0u) << "2% loss and nothing was sent again?";
}

// Streams over multicast (StreamOptions::multicast): the publisher sends each
// batch once to the group address - no member forwards - and members that
// lack one are repaired over their channels; every message still arrives
// once, in order, equal.
TEST(Streams, OverMulticastEachBatchLeavesThePublisherOnce) {
  GroupOptions o = options(8, 2);
  o.streams.multicast = true;
  auto g = engine().create_local_group(o);
  EXPECT_EQ(g->caps().stream_fanout, 7u) << "reports go to the publisher: the star";
  StreamRun run;
  run.publishers = {2};
  run.messages = 3000;
  run.sizes = {64, 0, 1, 200, 1383, 1384, 1385, 3000, 64, 65536, 17, 64};
  ASSERT_EQ(run_stream(*g, run), "");
  const uint64_t batches = counter(*g, 2, "stream_batches_formed");
  EXPECT_GT(batches, 0u);
  EXPECT_EQ(counter(*g, 2, "stream_multicasts_tx"), batches) << "each batch to the group address once";
  for (Rank r = 0; r < g->size(); ++r) {
    if (r == 2) continue;
    EXPECT_EQ(counter(*g, r, "stream_batches_tx"), 0u) << "rank " << r << " forwarded: nobody but the publisher sends";
    EXPECT_GT(counter(*g, r, "stream_multicasts_rx"), 0u) << "rank " << r;
  }
  // Repairs owed and not sent: the reports showed them held first.
  const uint64_t sent = counter(*g, 2, "stream_batches_tx");
  EXPECT_GE(sent, batches);
  EXPECT_LE(sent, batches + counter(*g, 2, "stream_repairs"));
}

TEST(Streams, OverMulticastLossIsRepairedOverChannels) {
  // A third of the multicast frames lost at every member, and 2% of every
  // frame besides (repairs, reports and acks too), two publishers at once.
  GroupOptions o = options(6, 2);
  o.streams.multicast = true;
  o.faults.seed = test::test_seed();
  FaultRule mcast;
  mcast.frames = FaultRule::Frames::Multicast;
  mcast.faults.loss = 0.33;
  FaultRule all;
  all.frames = FaultRule::Frames::Unicast;
  all.faults.loss = 0.02;
  o.faults.rules = {mcast, all};
  auto g = engine().create_local_group(o);
  const StreamRun run = two_publishers();
  EXPECT_EQ(run_stream(*g, run, 120s), "");
  for (const Rank p : run.publishers) EXPECT_GT(counter(*g, p, "stream_repairs"), 0u) << "publisher " << p;
}

TEST(Streams, SlowMemberHoldsThePublisherBackAndLosesNothing) {
  GroupOptions o = options(4, 1);
  o.streams.window_bytes = 16 << 10;
  o.streams.delivery_bytes = 16 << 10;
  auto g = engine().create_local_group(o);
  Publisher p = g->member(0).open_stream(0);
  const std::vector<uint32_t> sizes{100};
  // Nobody reads: the delivery rings and then the window fill up, and stay
  // full: nothing is published for 300 ms (the publisher's own ring drains
  // into frames meanwhile, so a WouldBlock alone proves nothing).
  uint64_t sent = 0;
  const auto until = std::chrono::steady_clock::now() + 10s;
  auto last_ok = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() < until && std::chrono::steady_clock::now() - last_ok < 300ms) {
    const PublishResult r = p.publish(message(0, sent, sizes));
    if (r == PublishResult::Ok) {
      ++sent;
      last_ok = std::chrono::steady_clock::now();
    } else {
      ASSERT_EQ(r, PublishResult::WouldBlock);
      std::this_thread::sleep_for(100us);
    }
  }
  ASSERT_LT(std::chrono::steady_clock::now(), until) << "the window never closed";
  // A delivery ring holds about 120 of these messages, the window 160.
  EXPECT_LT(sent, 400u) << "more published than the rings and the 16 KiB window hold";
  EXPECT_GT(sent, 100u);
  // Now every member reads; the publisher goes on to 1000 messages.
  std::vector<Check> checks(4);
  for (auto& c : checks) c.next_seq.assign(4, 0);
  std::atomic<bool> stop{false};
  std::vector<std::thread> readers;
  for (Rank r = 0; r < 4; ++r)
    readers.emplace_back([&, r] {
      StreamMessage m;
      while (!stop.load() && checks[r].error.empty())
        if (g->member(r).next_for(m, 5ms)) checks[r].take(m, sizes);
    });
  for (; sent < 1000; ++sent)
    if (p.publish_for(message(0, sent, sizes), 20s) != PublishResult::Ok) break;
  EXPECT_EQ(sent, 1000u) << p.status().message;
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  auto all_done = [&] {
    for (auto& c : checks)
      if (c.delivered < 1000 && c.error.empty()) return false;
    return true;
  };
  while (!all_done() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
  stop = true;
  for (auto& t : readers) t.join();
  for (Rank r = 0; r < 4; ++r) {
    EXPECT_EQ(checks[r].error, "") << "rank " << r;
    EXPECT_EQ(checks[r].delivered, 1000u) << "rank " << r;
  }
  // The publisher learns that everything is stable.
  const auto stable_by = std::chrono::steady_clock::now() + 5s;
  while (p.stable() < 1000 && std::chrono::steady_clock::now() < stable_by) std::this_thread::sleep_for(1ms);
  EXPECT_EQ(p.stable(), 1000u);
}

// Every member publishes (what a group of daemons does): each member keeps a
// slot for every member's stream, so the fifth publisher - and the eighth -
// is taken like the first (a fixed number of slots once left the fifth
// unacknowledged until the peer timeout).
TEST(Streams, EveryMemberPublishes) {
  auto g = engine().create_local_group(options(8, 2));
  StreamRun run;
  run.publishers = {0, 1, 2, 3, 4, 5, 6, 7};
  run.messages = 500;
  run.sizes = {64, 1000, 5000};
  EXPECT_EQ(run_stream(*g, run), "");
}

TEST(Streams, HandlerOnThePollingCore) {
  GroupOptions o = options(5, 2);
  o.streams.streams_per_member = 2;  // member 2 publishes its second stream
  auto g = engine().create_local_group(o);
  const std::vector<uint32_t> sizes{64, 3000, 10};
  std::vector<Check> checks(5);
  for (auto& c : checks) c.next_seq.assign(5, 0);
  for (Rank r = 0; r < 5; ++r) g->member(r).on_message([&, r](const StreamMessage& m) { checks[r].take(m, sizes); });
  Publisher p = g->member(2).open_stream(1);
  for (uint64_t s = 0; s < 5000; ++s) ASSERT_EQ(p.publish_for(message(2, s, sizes), 20s), PublishResult::Ok);
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (p.stable() < 5000 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
  ASSERT_EQ(p.stable(), 5000u);
  for (Rank r = 0; r < 5; ++r) {
    EXPECT_EQ(checks[r].error, "") << "rank " << r;
    EXPECT_EQ(checks[r].delivered, 5000u) << "rank " << r;
  }
}

TEST(Streams, BroadcastsRunBesideAStream) {
  auto g = engine().create_local_group(options(4, 1));
  std::atomic<bool> done{false};
  std::string stream_result;
  std::thread streaming([&] {
    StreamRun run;
    run.publishers = {1};
    run.messages = 20000;
    run.sizes = {64, 700};
    stream_result = run_stream(*g, run);
    done = true;
  });
  std::mt19937_64 rng(test::test_seed());
  int broadcasts = 0;
  while (!done.load() || broadcasts < 5) {
    std::vector<std::vector<std::byte>> bufs(4, std::vector<std::byte>(100000));
    test::fill(bufs[2], rng);
    ASSERT_EQ(test::broadcast_all(*g, 2, bufs), "");
    ASSERT_TRUE(test::verified(bufs, 2));
    ++broadcasts;
  }
  streaming.join();
  EXPECT_EQ(stream_result, "");
}

// The largest message a stream takes fits its window of frames: all its
// pieces are held at once before it is delivered, so a message longer than
// the window would leave the publisher waiting for ever (a 1.9 MB message
// on the default 1024-frame window once did). With a window of 16 frames:
// messages of exactly max_message() are delivered, one byte more is refused.
TEST(Streams, TheLargestMessageFitsTheWindow) {
  GroupOptions o = options(4, 1);
  o.streams.window_batches = 16;
  auto g = engine().create_local_group(o);
  Publisher p = g->member(0).open_stream(0);
  const uint64_t max = p.max_message();
  EXPECT_LE(max, 16 * (o.segment_bytes - 16));
  EXPECT_EQ(p.publish(std::vector<std::byte>(max + 1)), PublishResult::TooLarge);
  const std::vector<uint32_t> sizes{static_cast<uint32_t>(max)};
  for (uint64_t s = 0; s < 3; ++s) ASSERT_EQ(p.publish_for(message(0, s, sizes), 10s), PublishResult::Ok);
  for (Rank r = 0; r < 4; ++r) {
    Check c;
    c.next_seq.assign(4, 0);
    StreamMessage m;
    while (c.delivered < 3 && c.error.empty() && g->member(r).next_for(m, 10s)) c.take(m, sizes);
    EXPECT_EQ(c.error, "") << "rank " << r;
    EXPECT_EQ(c.delivered, 3u) << "rank " << r;
  }
}

// A member whose application takes none of its messages (member 2 never
// calls next()): by default it holds the publisher back - nothing is
// dropped, publish() says WouldBlock once the window is full; with
// evict_after_ms the member leaves the stream after that long with its ring
// full, the others get every message, and every member hears who left.
TEST(Streams, ASlowMemberHoldsThePublisherBackUnlessTheGroupEvictsIt) {
  for (const double evict_ms : {0.0, 100.0}) {
    SCOPED_TRACE("evict_after_ms " + std::to_string(evict_ms));
    GroupOptions o = options(4, 1);  // a chain: member 2 forwards to member 3
    o.streams.evict_after_ms = evict_ms;
    auto g = engine().create_local_group(o);
    const std::vector<uint32_t> sizes{64};
    std::vector<Check> checks(4);
    for (auto& c : checks) c.next_seq.assign(4, 0);
    for (Rank r : {0u, 1u, 3u}) g->member(r).on_message([&, r](const StreamMessage& m) { checks[r].take(m, sizes); });
    Publisher p = g->member(0).open_stream(0);
    constexpr uint64_t kMessages = 40000;
    uint64_t published = 0;
    for (; published < kMessages; ++published)
      if (p.publish_for(message(0, published, sizes), 500ms) != PublishResult::Ok) break;
    if (evict_ms == 0) {
      EXPECT_LT(published, kMessages) << "the slow member held the publisher back";
      EXPECT_EQ(g->member(2).stream_status().error, ErrorKind::None);
      continue;
    }
    ASSERT_EQ(published, kMessages) << p.status().message;
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while (p.stable() < kMessages && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
    for (Rank r : {0u, 1u, 3u}) {
      EXPECT_EQ(checks[r].error, "") << "rank " << r;
      EXPECT_EQ(checks[r].delivered, kMessages) << "rank " << r;
    }
    EXPECT_EQ(g->member(2).stream_status().error, ErrorKind::Evicted) << g->member(2).stream_status().message;
    ASSERT_EQ(g->member(2).streams().size(), 1u);
    EXPECT_TRUE(g->member(2).streams()[0].evicted);
    for (Rank r : {0u, 1u, 3u}) {
      const auto heard_by = std::chrono::steady_clock::now() + 5s;
      while (g->member(r).streams()[0].evicted_members == 0 && std::chrono::steady_clock::now() < heard_by)
        std::this_thread::sleep_for(1ms);
      EXPECT_EQ(g->member(r).streams()[0].evicted_members, 1u) << "rank " << r;
      EXPECT_FALSE(g->member(r).streams()[0].evicted);
      EXPECT_TRUE(g->member(r).stream_status().ok());
    }
  }
}

TEST(Streams, RefusesWhatItCannotDo) {
  auto g = engine().create_local_group(options(3, 1));
  EXPECT_THROW(g->member(0).open_stream(1), std::invalid_argument);  // streams_per_member is 1
  Publisher p = g->member(0).open_stream(0);
  EXPECT_THROW(g->member(0).open_stream(0), std::invalid_argument);
  std::vector<std::byte> huge(p.max_message() + 1);
  EXPECT_EQ(p.publish(huge), PublishResult::TooLarge);
  GroupOptions bad = options(3, 1);
  bad.streams.window_bytes = 100;
  EXPECT_THROW(engine().create_local_group(bad), std::invalid_argument);
  bad = options(3, 1);
  bad.streams.streams_per_member = kMaxStreamsPerMember + 1;
  EXPECT_THROW(engine().create_local_group(bad), std::invalid_argument);
}

}  // namespace
}  // namespace lanecast
