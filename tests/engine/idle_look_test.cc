// An engine that progresses in calls, with EngineOptions::idle_look_us: a
// thread of the engine looks at the members while no application thread is
// inside a call - what liblanecast-mpi runs, where a rank may sit in another
// library's call (MPI_Barrier) while a peer waits for its ack. And park():
// groups made and left while another thread drives the same poller. Its own
// binary: one Engine per process.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <random>
#include <thread>
#include <vector>

#include "tests/engine/group_env.h"

namespace lanecast {
namespace {

using test::fill;
using test::test_seed;

Engine& looked_engine() {
  static Engine e([] {
    EngineOptions o;
    o.memory_mb = 1024;
    o.progress_in_calls = true;
    o.idle_look_us = 500;
    return o;
  }());
  return e;
}

// A pure check: wait_for(0) neither drives nor waits.
bool done_now(Completion& c) { return c.wait_for(std::chrono::nanoseconds(0)).has_value(); }

// Every member posts, nobody waits: the looks alone carry the broadcast
// through (an engine without them moves nothing between calls:
// progress_in_calls_test's ReadyMovesTheGroupAndWaitForTimesOut).
TEST(IdleLook, MembersNobodyWaitsForStillComplete) {
  GroupOptions o;
  o.nodes = 4;
  o.algo = "chain";
  o.max_message_bytes = 1 << 20;
  o.fabric.loss = 0.01;  // resends, which only a turn of the loop can send
  o.fabric.seed = test_seed();
  auto g = looked_engine().create_local_group(o);
  std::mt19937_64 rng(test_seed());
  std::vector<std::vector<std::byte>> bufs(4, std::vector<std::byte>(300'000));
  fill(bufs[2], rng);
  std::vector<Completion> done;
  for (Rank r = 0; r < 4; ++r) done.push_back(g->member(r).broadcast(2, bufs[r]));
  bool all = false;
  for (int i = 0; i < 200 && !all; ++i) {  // 10 s at most
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    all = true;
    for (auto& d : done) all = done_now(d) && all;
  }
  ASSERT_TRUE(all) << "the looks did not complete a broadcast nobody waited for";
  for (auto& d : done) EXPECT_TRUE(d.wait().ok());
  EXPECT_TRUE(test::verified(bufs, 2));
}

// A thread waits (drives the poller) on a broadcast that cannot finish while
// this thread makes groups, broadcasts on them and leaves them: park() must
// take the poller from the driving thread each time (its task list changes)
// and give it back. Under the sanitizers a task list changed under the
// driver is a use after free.
TEST(IdleLook, GroupsComeAndGoWhileAnotherThreadDrives) {
  GroupOptions o;
  o.nodes = 3;
  o.peer_timeout_ms = 60'000;
  auto stuck = looked_engine().create_local_group(o);
  std::vector<std::byte> lonely_buf(1000);
  std::atomic<bool> stop{false};
  std::atomic<int> waits{0};
  std::thread waiter([&] {
    Completion lonely = stuck->member(0).broadcast(1, lonely_buf);  // ranks 1 and 2 post it only at the end
    while (!stop.load()) {
      if (!lonely.wait_for(std::chrono::milliseconds(20)).has_value()) waits.fetch_add(1);
    }
  });
  std::mt19937_64 rng(test_seed());
  for (int round = 0; round < 12; ++round) {
    GroupOptions b;
    b.nodes = 2 + round % 3;
    b.max_message_bytes = 256 << 10;
    auto g = looked_engine().create_local_group(b);
    std::vector<std::vector<std::byte>> bufs(b.nodes, std::vector<std::byte>(100'000));
    fill(bufs[0], rng);
    ASSERT_EQ(test::broadcast_all(*g, 0, bufs), "") << "round " << round;
    EXPECT_TRUE(test::verified(bufs, 0)) << "round " << round;
  }
  stop = true;
  // The stuck broadcast ends as every broadcast does: all three post it.
  std::vector<std::byte> b1(1000), b2(1000);
  Completion c1 = stuck->member(1).broadcast(1, b1), c2 = stuck->member(2).broadcast(1, b2);
  EXPECT_TRUE(c1.wait().ok());
  EXPECT_TRUE(c2.wait().ok());
  waiter.join();
  EXPECT_GT(waits.load(), 0);
}

TEST(IdleLook, RefusesALookLongerThanASecond) {
  EngineOptions o;
  o.progress_in_calls = true;
  o.idle_look_us = 1'000'001;
  EXPECT_THROW(Engine{o}, std::invalid_argument);
}

}  // namespace
}  // namespace lanecast
