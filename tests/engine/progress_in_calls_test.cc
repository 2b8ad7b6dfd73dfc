// An engine without polling cores (EngineOptions::progress_in_calls): the
// members move only while application threads are inside wait(), wait_for()
// or ready(). Its own binary: one Engine per process, and this one has no
// polling thread.
#include <gtest/gtest.h>
#include <rte_lcore.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <random>
#include <thread>
#include <vector>

#include "engine/api/member_internals.h"
#include "tests/engine/group_env.h"

namespace lanecast {
namespace {

using test::broadcast_all;
using test::fill;
using test::test_seed;

// The CPUs the process may use before DPDK starts (taken at load time).
const cpu_set_t g_cpus_at_start = [] {
  cpu_set_t set;
  CPU_ZERO(&set);
  sched_getaffinity(0, sizeof(set), &set);
  return set;
}();

Engine& calls_engine() {
  static Engine e([] {
    EngineOptions o;
    o.memory_mb = 1024;
    o.progress_in_calls = true;
    return o;
  }());
  return e;
}

TEST(ProgressInCalls, HasNoPollingCore) {
  EXPECT_TRUE(calls_engine().progress_in_calls());
  EXPECT_EQ(calls_engine().polling_cores(), 0u);
  EXPECT_EQ(rte_lcore_count(), 1u);  // DPDK started without worker lcores
}

// The application's thread is the poller: DPDK must leave it every CPU it
// had. (Confined to the CPUs a worker would have left, every member process
// of a host once ran on one CPU while the others idled.)
TEST(ProgressInCalls, TheCallersThreadKeepsEveryCpu) {
  calls_engine();
  cpu_set_t now;
  CPU_ZERO(&now);
  ASSERT_EQ(sched_getaffinity(0, sizeof(now), &now), 0);
  EXPECT_TRUE(CPU_EQUAL(&now, &g_cpus_at_start)) << CPU_COUNT(&now) << " of " << CPU_COUNT(&g_cpus_at_start);
}

// One thread posts every member's part and waits for each in turn: waiting
// for member 0 must move all of them (and the fabric's switch), or the
// broadcast could never complete.
TEST(ProgressInCalls, OneThreadDrivesEveryMemberThroughEveryAlgorithm) {
  std::mt19937_64 rng(test_seed());
  for (const char* algo : {"chain", "binomial", "bintree", "linear", "symmetric", "hypercube", "scatter_allgather",
                           "mcast_chain"}) {
    GroupOptions o;
    o.nodes = 6;
    o.algo = algo;
    o.max_message_bytes = 1 << 20;
    auto g = calls_engine().create_local_group(o);
    for (uint64_t size : {uint64_t{2}, uint64_t{70'000}, uint64_t{1} << 20}) {
      const Rank root = static_cast<Rank>(rng() % o.nodes);
      std::vector<std::vector<std::byte>> bufs(o.nodes, std::vector<std::byte>(size));
      fill(bufs[root], rng);
      ASSERT_EQ(broadcast_all(*g, root, bufs), "") << algo << " " << size;
      for (Rank r = 0; r < o.nodes; ++r) ASSERT_TRUE(bufs[r] == bufs[root]) << algo << " rank " << r;
    }
  }
}

// Each member on a thread of its own, all waiting at once: one thread drives
// at a time, the others sleep on their completions and take over when it
// leaves. Loss makes some broadcasts need retransmissions, which only the
// driving thread's turns can send.
TEST(ProgressInCalls, ManyThreadsTakeTurnsDriving) {
  constexpr uint32_t kNodes = 5, kRounds = 30;
  GroupOptions o;
  o.nodes = kNodes;
  o.algo = "chain";
  o.segment_bytes = 512;
  o.max_message_bytes = 64 << 10;
  o.fabric.loss = 0.02;
  o.fabric.seed = test_seed();
  auto g = calls_engine().create_local_group(o);
  std::vector<std::vector<std::byte>> bufs(kNodes, std::vector<std::byte>(40'000));
  std::vector<std::vector<std::byte>> sent(kRounds, std::vector<std::byte>(40'000));
  std::mt19937_64 rng(test_seed());
  for (auto& s : sent) fill(s, rng);
  std::atomic<uint32_t> bad{0};
  std::vector<std::thread> threads;
  for (Rank r = 0; r < kNodes; ++r)
    threads.emplace_back([&, r] {
      for (uint32_t i = 0; i < kRounds; ++i) {
        const Rank root = i % kNodes;
        if (r == root) bufs[r] = sent[i];
        else std::fill(bufs[r].begin(), bufs[r].end(), std::byte{0});
        Status s = g->member(r).broadcast(root, bufs[r]).wait();
        if (!s.ok() || bufs[r] != sent[i]) bad.fetch_add(1);
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(bad.load(), 0u);
}

// ready() is a turn of the loop: polling it alone completes a broadcast.
// wait_for() gives up at its deadline when the others never post.
TEST(ProgressInCalls, ReadyMovesTheGroupAndWaitForTimesOut) {
  GroupOptions o;
  o.nodes = 3;
  o.peer_timeout_ms = 5'000;
  auto g = calls_engine().create_local_group(o);
  std::vector<std::vector<std::byte>> bufs(3, std::vector<std::byte>(3000));
  std::mt19937_64 rng(test_seed());
  fill(bufs[1], rng);
  std::vector<Completion> done;
  for (Rank r = 0; r < 3; ++r) done.push_back(g->member(r).broadcast(1, bufs[r]));
  bool all = false;
  for (int spins = 0; spins < 5'000'000 && !all; ++spins) {
    all = true;
    for (auto& d : done) all = d.ready() && all;
  }
  ASSERT_TRUE(all) << "ready() alone did not complete the broadcast";
  for (auto& d : done) EXPECT_TRUE(d.wait().ok());
  EXPECT_TRUE(test::verified(bufs, 1));

  // Only member 0 posts: nothing can complete.
  Completion lonely = g->member(0).broadcast(2, bufs[0]);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(lonely.wait_for(std::chrono::milliseconds(50)).has_value());
  const auto waited = std::chrono::steady_clock::now() - t0;
  EXPECT_GE(waited, std::chrono::milliseconds(50));
  // The others join late; it completes.
  Completion a = g->member(1).broadcast(2, bufs[1]);
  Completion b = g->member(2).broadcast(2, bufs[2]);
  EXPECT_TRUE(lonely.wait().ok());
  EXPECT_TRUE(a.wait().ok());
  EXPECT_TRUE(b.wait().ok());
}

// wait_local() returns once the member is done with its buffer: the root's
// bytes copied out (scribbling over them then changes nothing the others
// get), another member's filled. With loss, frames the root sent are sent
// again after it left - from the engine's copies - and the broadcast still
// finishes everywhere.
TEST(ProgressInCalls, WaitLocalHandsTheBufferBackEarly) {
  GroupOptions o;
  o.nodes = 4;
  o.algo = "chain";
  o.segment_bytes = 1000;
  o.max_message_bytes = 1 << 20;
  o.fabric.loss = 0.05;
  o.fabric.seed = test_seed();
  auto g = calls_engine().create_local_group(o);
  std::mt19937_64 rng(test_seed());
  for (int round = 0; round < 5; ++round) {
    std::vector<std::vector<std::byte>> bufs(4, std::vector<std::byte>(200'000));
    fill(bufs[0], rng);
    const std::vector<std::byte> sent = bufs[0];
    std::vector<Completion> done;
    for (Rank r = 0; r < 4; ++r) done.push_back(g->member(r).broadcast(0, bufs[r]));
    ASSERT_TRUE(done[0].wait_local().ok());
    std::fill(bufs[0].begin(), bufs[0].end(), std::byte{0x5A});  // the root's buffer is its own again
    for (Rank r = 1; r < 4; ++r) {
      ASSERT_TRUE(done[r].wait_local().ok()) << "round " << round << " rank " << r;
      EXPECT_TRUE(bufs[r] == sent) << "round " << round << " rank " << r << " left before it held the message";
    }
    for (Rank r = 0; r < 4; ++r) EXPECT_TRUE(done[r].wait().ok()) << "round " << round << " rank " << r;
  }
  EXPECT_GT(node_counters(g->member(0)).tx_retransmits.get(), 0u) << "no loss was repaired: the test proves less";
}

}  // namespace
}  // namespace lanecast
