#include "engine/runtime/poller.h"

#include <rte_pause.h>
#include <sched.h>
#include <sys/prctl.h>
#include <time.h>

#include <algorithm>

#include "engine/runtime/clock.h"

namespace lanecast::engine {

void Poller::run() {
  // Naps are short; the default 50 us timer slack would stretch them.
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  for (;;) {
    const int s = state_.load(std::memory_order_acquire);
    if (s == kStop) return;
    if (s == kParkRequested || s == kParked) {
      state_.store(kParked, std::memory_order_release);
      while (state_.load(std::memory_order_acquire) == kParked) {
        timespec ts{0, 200'000};
        nanosleep(&ts, nullptr);
      }
      last_work_ns_ = now_ns();
      last_turn_ns_ = 0;
      continue;
    }
    uint64_t now = 0;
    if (turn(now) > 0) last_work_ns_ = now;
    else back_off(now, UINT64_MAX);
  }
}

uint32_t Poller::turn(uint64_t& now) {
  // A clock read per task, not per turn: a turn over many members that
  // make system calls (af_packet's transmit carries the frame through the
  // kernel's network) lasts long, and a member's times - when it held a
  // message, when a timer is due - must not be stale by the turn.
  // The reading after one task is the next one's (and the first, the
  // cycle's start); the last is the turn's end.
  uint32_t work = 0;
  note_cycle(now = now_ns());
  for (PollTask* t : tasks_) {
    work += t->poll_rx(now);
    now = now_ns();
  }
  for (PollTask* t : tasks_) {
    work += t->poll_tx(now);
    now = now_ns();
  }
  iterations_.store(iterations_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  return work;
}

void Poller::note_cycle(uint64_t start) {
  if (last_turn_ns_ != 0 && start > last_turn_ns_) {
    const uint64_t cycle = start - last_turn_ns_;
    if (cycle > longest_cycle_ns_.load(std::memory_order_relaxed))
      longest_cycle_ns_.store(cycle, std::memory_order_relaxed);
    if (cycle > kLongCycleNs) long_cycles_.store(long_cycles_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  last_turn_ns_ = start;
}

void Poller::back_off(uint64_t now, uint64_t limit_ns) {
  const bool spun = now - last_work_ns_ > backoff_.spin_ns && now - woke_ns_ > kAfterWakeNs &&
                    (now - last_work_ns_ > backoff_.busy_spin_ns || !any_busy());
  // On CPUs shared with other engines, a core whose busy members only wait
  // for their pacers knows when it is next needed, and naps until then (an
  // arrival still wakes it): spinning through every pacer gap - 120 us a
  // frame at 100 Mbit/s - gave the other engines' CPU to a wait, and on 16
  // member processes sharing 2 CPUs two roots paced at 100 Mbit/s sent 62,
  // so their rates, grown only in rounds that send 80% of them, never grew
  // (tests/bench/two_jobs.sh: both jobs at 0.30 of the link in 2 runs of 10).
  const bool paced = backoff_.yield_when_idle && only_pacers_hold(now) && earliest_wakeup() >= now + kPacerNapNs;
  if ((spun || paced) && idle_wait(now, limit_ns)) return;
  // Not sleeping (still spinning, or a task says something is due that its
  // turn did not do): give way before the next turn, never spin flat out.
  if (backoff_.yield_when_idle) {
    sched_yield();  // another engine's poller on this CPU may have the next hop
  } else {
    rte_pause();
  }
}

bool Poller::drive_until(bool (*done)(const void*), const void* arg, uint64_t deadline_ns) {
  if (driving_.exchange(true, std::memory_order_acquire)) return false;
  if (park_requested_.load(std::memory_order_acquire)) {  // park() is waiting for the loop: leave it
    driving_.store(false, std::memory_order_release);
    return false;
  }
  thread_local bool slack_set = false;  // as run(): naps are short
  if (!slack_set) slack_set = prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0) == 0;
  // The caller's wait is work: it starts the spin that precedes a sleep.
  last_work_ns_ = now_ns();
  last_turn_ns_ = 0;  // between calls nobody drives it: not a stall
  uint64_t now = last_work_ns_;
  const auto parking = [this] { return park_requested_.load(std::memory_order_relaxed); };
  while (!done(arg) && now < deadline_ns && !parking()) {
    if (turn(now) > 0) last_work_ns_ = now;
    else if (!done(arg)) back_off(now, deadline_ns);
  }
  // What became due with the completion (an ack asked for at once, a frame
  // the pacer now allows) leaves before the caller does: between calls
  // nothing moves.
  for (int i = 0; i < kFlushTurns && !parking() && turn(now) > 0; ++i) {
  }
  last_driven_ns_.store(now, std::memory_order_relaxed);
  driving_.store(false, std::memory_order_release);
  return true;
}

bool Poller::any_busy() const {
  for (const PollTask* t : tasks_)
    if (t->busy()) return true;
  return false;
}

bool Poller::only_pacers_hold(uint64_t now) const {
  bool held = false;
  for (const PollTask* t : tasks_) {
    if (!t->busy()) continue;
    if (!t->pacer_holds(now)) return false;
    held = true;
  }
  return held;
}

uint64_t Poller::earliest_wakeup() const {
  uint64_t wake = UINT64_MAX;
  for (const PollTask* t : tasks_) wake = std::min(wake, t->next_wakeup_ns());
  return wake;
}

// Sleeps until the earliest task timer, or until an arrival wakes the core
// (drivers/wake.h): "sleeping" is published first, every task arms its
// wake-up, and then every task is polled once more, so work that became
// visible before the flag was set is found by that poll, and work after it
// wakes the core.
bool Poller::idle_wait(uint64_t now, uint64_t limit_ns) {
  if (earliest_wakeup() <= now) return false;  // something is due: keep polling
  waker_.begin_sleep();
  bool all_wake = true;
  for (PollTask* t : tasks_) all_wake = t->arm_wakeup() && all_wake;
  uint32_t work = 0;
  uint64_t look = 0;
  bool slept = false;
  for (PollTask* t : tasks_) work += t->poll_rx(look = now_ns());
  for (PollTask* t : tasks_) work += t->poll_tx(look = now_ns());
  if (work == 0) {
    const uint64_t wake = std::min(earliest_wakeup(), limit_ns);
    const uint64_t t = now_ns();
    uint64_t nap = wake <= t ? 0 : wake - t;
    if (!all_wake) nap = std::min(nap, backoff_.max_sleep_ns);
    if (nap >= 1'000) {
      waker_.sleep(nap);
      woke_ns_ = now_ns();
      sleeps_.store(sleeps_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      slept = true;
      last_turn_ns_ = 0;  // a nap is not a stall
    }
  } else {
    last_work_ns_ = look;
  }
  waker_.end_sleep();
  for (PollTask* t : tasks_) t->disarm_wakeup();
  return slept || work > 0;
}

void Poller::park() {
  if (in_calls_) {
    // No loop of its own: parked means no thread drives it. A driving
    // thread sees the request at its next turn and leaves (its wait goes
    // on sleeping, and drives again after unpark()).
    park_requested_.store(true, std::memory_order_release);
    while (driving_.exchange(true, std::memory_order_acquire)) {
      timespec ts{0, 20'000};
      nanosleep(&ts, nullptr);
    }
    return;
  }
  int expected = kRun;
  state_.compare_exchange_strong(expected, kParkRequested, std::memory_order_acq_rel);
  // A sleeping core must see the request now, not at its next timer.
  waker_.notify();
  while (state_.load(std::memory_order_acquire) == kParkRequested) {
    timespec ts{0, 50'000};
    nanosleep(&ts, nullptr);
    waker_.notify();
  }
}

void Poller::unpark() {
  if (in_calls_) {
    park_requested_.store(false, std::memory_order_release);
    driving_.store(false, std::memory_order_release);
    return;
  }
  int expected = kParked;
  state_.compare_exchange_strong(expected, kRun, std::memory_order_acq_rel);
  expected = kParkRequested;  // parked before run() ever looked
  state_.compare_exchange_strong(expected, kRun, std::memory_order_acq_rel);
}

void Poller::stop() {
  state_.store(kStop, std::memory_order_release);
  waker_.notify();
}

void Poller::remove(PollTask* t) { tasks_.erase(std::remove(tasks_.begin(), tasks_.end(), t), tasks_.end()); }

}  // namespace lanecast::engine
