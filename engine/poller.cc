#include "engine/poller.h"

#include <rte_pause.h>
#include <sys/prctl.h>
#include <time.h>

#include <algorithm>

#include "engine/clock.h"

namespace lanecast::engine {

void Poller::run() {
  // Naps are short; the default 50 us timer slack would double them.
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
      continue;
    }
    const uint64_t now = now_ns();
    uint32_t work = 0;
    for (PollTask* t : tasks_) work += t->poll(now);
    iterations_.store(iterations_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    if (work > 0) {
      last_work_ns_ = now;
    } else if (now - last_work_ns_ > backoff_.spin_ns) {
      idle_wait(now);
    } else {
      rte_pause();
    }
  }
}

void Poller::idle_wait(uint64_t now) {
  uint64_t wake = UINT64_MAX;
  for (const PollTask* t : tasks_) wake = std::min(wake, t->next_wakeup_ns());
  if (wake <= now) return;  // something is due: keep polling
  const uint64_t nap = std::min(backoff_.max_sleep_ns, wake - now);
  if (nap < 1'000) return;
  timespec ts{0, static_cast<long>(nap)};
  nanosleep(&ts, nullptr);
  sleeps_.store(sleeps_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

void Poller::park() {
  int expected = kRun;
  state_.compare_exchange_strong(expected, kParkRequested, std::memory_order_acq_rel);
  while (state_.load(std::memory_order_acquire) == kParkRequested) {
    timespec ts{0, 50'000};
    nanosleep(&ts, nullptr);
  }
}

void Poller::unpark() {
  int expected = kParked;
  state_.compare_exchange_strong(expected, kRun, std::memory_order_acq_rel);
  expected = kParkRequested;  // parked before run() ever looked
  state_.compare_exchange_strong(expected, kRun, std::memory_order_acq_rel);
}

void Poller::stop() { state_.store(kStop, std::memory_order_release); }

void Poller::remove(PollTask* t) { tasks_.erase(std::remove(tasks_.begin(), tasks_.end(), t), tasks_.end()); }

}  // namespace lanecast::engine
