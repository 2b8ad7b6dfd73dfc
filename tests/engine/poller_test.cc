// The polling core's cycle tracker: how long at once a core was away from its
// tasks (Poller::longest_cycle_ns), naps left out. A task stands in for the
// members: it can stop the core mid-turn (as the kernel taking its CPU does)
// or have nothing to do, so that the core naps until notified.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include "engine/runtime/poller.h"

namespace lanecast::engine {
namespace {

using std::chrono::milliseconds;

class ScriptedTask : public PollTask {
 public:
  ScriptedTask() = default;
  ScriptedTask(uint64_t stall_turn, uint64_t ms) : stall_at(stall_turn), stall_ms(ms) {}
  std::atomic<uint64_t> turns{0};
  const uint64_t stall_at = UINT64_MAX;  // this turn takes stall_ms
  const uint64_t stall_ms = 0;
  std::atomic<bool> has_work{true};

  uint32_t poll_rx(uint64_t) override {
    const uint64_t n = turns.fetch_add(1) + 1;
    if (n == stall_at) std::this_thread::sleep_for(milliseconds(stall_ms));
    return has_work.load() ? 1 : 0;
  }
  uint64_t next_wakeup_ns() const override { return UINT64_MAX; }
  bool arm_wakeup() override { return true; }  // an arrival would notify the core: naps need no bound
};

// Runs a poller over `task` on a thread of its own until the scope ends.
class RunningPoller {
 public:
  RunningPoller(PollTask& task, const BackoffOptions& b) : poller_(b) {
    poller_.add(&task);
    thread_ = std::thread([this] { poller_.run(); });
  }
  ~RunningPoller() {
    poller_.stop();
    thread_.join();
  }
  Poller& operator*() { return poller_; }
  Poller* operator->() { return &poller_; }

 private:
  Poller poller_;
  std::thread thread_;
};

// Waits (bounded) until the task has been polled `n` times in all.
bool wait_turns(const ScriptedTask& t, uint64_t n) {
  for (int i = 0; i < 10'000 && t.turns.load() < n; ++i) std::this_thread::sleep_for(milliseconds(1));
  return t.turns.load() >= n;
}

// A core whose 1000th turn lasts 50 ms (as if the kernel took its CPU),
// run past it.
class AStalledTurn : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(wait_turns(task, 2000));
    ASSERT_GE(p->longest_cycle_ns(), 50'000'000u);
  }
  ScriptedTask task{1000, 50};
  RunningPoller p{task, BackoffOptions{}};
};

TEST_F(AStalledTurn, IsTheCoresLongestCycle) {
  EXPECT_GE(p->long_cycles(), 1u);
  EXPECT_EQ(p->sleeps(), 0u) << "it always had work";
}

TEST_F(AStalledTurn, CountsNoMoreAfterAReset) {
  const uint64_t long_before = p->long_cycles();
  p->reset_longest_cycle();
  const uint64_t after = task.turns.load();
  ASSERT_TRUE(wait_turns(task, after + 2000));
  EXPECT_LT(p->longest_cycle_ns(), 50'000'000u) << "the stall before the reset still counted";
  EXPECT_GT(p->longest_cycle_ns(), 0u);
  EXPECT_GE(p->long_cycles(), long_before) << "the count of long cycles is not reset";
}

TEST(Poller, ANapIsNotACycle) {
  ScriptedTask task;
  task.has_work = false;
  BackoffOptions b;
  b.spin_ns = 10'000;  // nap soon after the last work
  RunningPoller p(task, b);
  // Idle: the core naps until notified (the task never has a timer), so
  // the task stops being polled (a nap is counted when it ends).
  uint64_t seen = task.turns.load();
  for (int i = 0; i < 1'000; ++i) {
    std::this_thread::sleep_for(milliseconds(20));
    const uint64_t now = task.turns.load();
    if (now == seen) break;
    seen = now;
  }
  std::this_thread::sleep_for(milliseconds(300));
  ASSERT_EQ(task.turns.load(), seen) << "the idle core kept polling";
  // Work arrives: notified, the core turns again.
  task.has_work = true;
  p->waker().notify();
  ASSERT_TRUE(wait_turns(task, seen + 2000));
  EXPECT_GE(p->sleeps(), 1u);
  EXPECT_LT(p->longest_cycle_ns(), 300'000'000u) << "the 300 ms nap was taken for the core being away";
}

// A member whose broadcast runs and whose next frame its pacer holds back
// until the next release, every `gap_ns`: busy, with a known time of work.
class PacedTask : public PollTask {
 public:
  explicit PacedTask(uint64_t gap_ns) : gap_ns_(gap_ns) {}
  std::atomic<uint64_t> turns{0}, releases{0};

  uint32_t poll_rx(uint64_t now) override {
    turns.fetch_add(1);
    if (next_ == 0) next_ = now + gap_ns_;
    if (now < next_) return 0;
    next_ = now + gap_ns_;  // a frame goes: the pacer holds the next one
    releases.fetch_add(1);
    return 1;
  }
  uint64_t next_wakeup_ns() const override { return next_; }
  bool arm_wakeup() override { return true; }
  bool busy() const override { return true; }
  bool pacer_holds(uint64_t now) const override { return now < next_; }

 private:
  const uint64_t gap_ns_;
  uint64_t next_ = 0;
};

// On CPUs shared with other engines (yield_when_idle), a core whose member
// waits for its pacer naps to the pacer's time instead of spinning through
// the gap: a few turns per frame, not thousands.
TEST(Poller, OnSharedCpusAPacedMemberNapsToItsPacer) {
  PacedTask task(1'000'000);  // a frame a millisecond
  BackoffOptions b;
  b.yield_when_idle = true;
  RunningPoller p(task, b);
  for (int i = 0; i < 10'000 && task.releases.load() < 100; ++i) std::this_thread::sleep_for(milliseconds(1));
  const uint64_t releases = task.releases.load(), turns = task.turns.load();
  ASSERT_GE(releases, 100u);
  // Spinning (as before, and as a busy member waiting for anything else
  // does: up to busy_spin_ns, 5 ms) polls thousands of times a gap.
  EXPECT_GE(p->sleeps(), releases / 4) << turns << " turns for " << releases << " frames";
  EXPECT_LT(turns, 50 * releases) << p->sleeps() << " naps";
}

// Gaps shorter than a nap is worth (Poller::kPacerNapNs) are polled
// through: a nap per frame of a 200 Mbit/s lane (60 us) cost more than it
// gave away.
TEST(Poller, ShortPacerGapsAreNotNappedThrough) {
  PacedTask task(40'000);
  BackoffOptions b;
  b.yield_when_idle = true;
  RunningPoller p(task, b);
  for (int i = 0; i < 10'000 && task.releases.load() < 200; ++i) std::this_thread::sleep_for(milliseconds(1));
  const uint64_t releases = task.releases.load();
  ASSERT_GE(releases, 200u);
  EXPECT_LT(p->sleeps(), releases / 10) << p->sleeps() << " naps for " << releases << " frames";
}

}  // namespace
}  // namespace lanecast::engine
