// Completion: one owner of a broadcast's outcome (move-only), a wait with a
// deadline, no pile-up of outcomes nobody waits for, and a clear refusal when
// too many broadcasts are outstanding.
#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <type_traits>
#include <vector>

#include "tests/engine/group_env.h"

namespace lanecast {
namespace {

using namespace std::chrono_literals;
using test::engine;

// Two copies once waited on one outcome, and the second never saw it.
static_assert(!std::is_copy_constructible_v<Completion>);
static_assert(!std::is_copy_assignable_v<Completion>);
static_assert(std::is_nothrow_move_constructible_v<Completion>);
static_assert(std::is_nothrow_move_assignable_v<Completion>);

GroupOptions small_group(uint32_t nodes) {
  GroupOptions o;
  o.nodes = nodes;
  o.algo = "linear";
  o.max_message_bytes = 64 << 10;
  return o;
}

TEST(Completion, WaitForGivesUpWhileTheBroadcastCannotFinish) {
  auto g = engine().create_local_group(small_group(3));
  std::vector<std::vector<std::byte>> bufs(3, std::vector<std::byte>(4000));
  Completion c1 = g->member(1).broadcast(0, bufs[1]);
  EXPECT_FALSE(c1.wait_for(20ms).has_value()) << "rank 1 cannot finish before the root posted";
  EXPECT_FALSE(c1.ready());
  Completion c0 = g->member(0).broadcast(0, bufs[0]);
  Completion c2 = g->member(2).broadcast(0, bufs[2]);
  for (Completion* c : {&c0, &c1, &c2}) {
    const auto s = c->wait_for(30s);
    ASSERT_TRUE(s.has_value());
    EXPECT_TRUE(s->ok()) << s->message;
  }
  EXPECT_GE(c1.finish_ns(), c1.held_ns());
  EXPECT_GE(c1.held_ns(), c1.start_ns());
}

TEST(Completion, MovingHandsTheOutcomeOver) {
  auto g = engine().create_local_group(small_group(2));
  std::vector<std::vector<std::byte>> bufs(2, std::vector<std::byte>(1000));
  Completion a = g->member(0).broadcast(0, bufs[0]);
  Completion b = g->member(1).broadcast(0, bufs[1]);
  Completion moved = std::move(a);
  EXPECT_FALSE(a.wait().ok()) << "a moved-from completion has no broadcast";
  EXPECT_TRUE(moved.wait().ok());
  std::vector<Completion> kept;
  kept.push_back(std::move(b));
  EXPECT_TRUE(kept[0].wait().ok());
}

// Outcomes nobody waits for are not kept: a member posts many more
// broadcasts than the box has slots, dropping most completions unread. (They
// once queued up on the member until the core stopped starting broadcasts.)
TEST(Completion, DroppedCompletionsDoNotPileUp) {
  auto g = engine().create_local_group(small_group(2));
  std::vector<std::vector<std::byte>> bufs(2, std::vector<std::byte>(256));
  std::mt19937_64 rng(test::test_seed());
  for (uint32_t i = 0; i < 640; ++i) {
    test::fill(bufs[0], rng);
    Completion root = g->member(0).broadcast(0, bufs[0]);
    Completion other = g->member(1).broadcast(0, bufs[1]);
    if (i % 32 == 31) {  // every 32nd is waited for (and with it, in order, all before)
      const auto s0 = root.wait_for(30s);
      const auto s1 = other.wait_for(30s);
      ASSERT_TRUE(s0 && s1) << "broadcast " << i + 1 << " never completed";
      ASSERT_TRUE(s0->ok() && s1->ok());
      ASSERT_EQ(bufs[0], bufs[1]);
    }
  }
}

TEST(Completion, TooManyOutstandingIsRefusedClearly) {
  auto g = engine().create_local_group(small_group(2));
  std::vector<std::vector<std::byte>> bufs(2, std::vector<std::byte>(100));
  std::vector<Completion> held;
  for (int i = 0; i < 64; ++i) held.push_back(g->member(1).broadcast(0, bufs[1]));  // the root never posts yet
  try {
    held.push_back(g->member(1).broadcast(0, bufs[1]));
    ADD_FAILURE() << "a 65th outstanding broadcast was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("64 broadcasts outstanding"), std::string::npos) << e.what();
  }
  // Dropping the oldest frees its slot; then everything completes.
  held.erase(held.begin());
  std::vector<Completion> roots;
  for (int i = 0; i < 64; ++i) roots.push_back(g->member(0).broadcast(0, bufs[0]));
  held.push_back(g->member(1).broadcast(0, bufs[1]));
  ASSERT_TRUE(roots[0].wait_for(30s).has_value());  // reading an outcome frees its slot too
  roots.push_back(g->member(0).broadcast(0, bufs[0]));
  for (auto& c : held) ASSERT_TRUE(c.wait_for(30s).value_or(Status{ErrorKind::Internal, "timeout"}).ok());
  for (auto& c : roots) ASSERT_TRUE(c.wait_for(30s).value_or(Status{ErrorKind::Internal, "timeout"}).ok());
}

}  // namespace
}  // namespace lanecast
