// A polling core: one thread (an EAL worker lcore) that runs its tasks (nodes,
// the fabric's switch) in a loop. Busy, it never sleeps. Idle for spin_ns, it
// sleeps until a task's next timer - and, for tasks whose arrivals wake it
// (drivers/wake.h: ring ports, af_packet wake-up sockets, posted broadcasts),
// until something arrives; a task that cannot wake it bounds the nap to
// max_sleep_ns. So many members can share few cores, and an idle member costs
// a broadcast no nap at every hop. Tasks are added and removed only while the
// core is parked.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "drivers/wake.h"

namespace lanecast::engine {

class PollTask {
 public:
  virtual ~PollTask() = default;
  // One iteration's work at time now; returns how much was done (0 = idle).
  virtual uint32_t poll(uint64_t now_ns) = 0;
  // When the task next needs the core if nothing arrives (UINT64_MAX: never).
  virtual uint64_t next_wakeup_ns() const = 0;
  // Just before the core sleeps: arm what wakes it on this task's arrivals.
  // Returns false when arrivals cannot wake it (the nap is then bounded).
  virtual bool arm_wakeup() { return false; }
  // After the core woke.
  virtual void disarm_wakeup() {}
};

struct BackoffOptions {
  uint64_t spin_ns = 200'000;      // keep polling this long after the last work
  uint64_t max_sleep_ns = 50'000;  // longest nap when a task's arrivals cannot wake the core
};

class Poller {
 public:
  explicit Poller(const BackoffOptions& b) : backoff_(b) {}
  // Runs until stop(); call on the thread that should poll.
  void run();

  // Control (any thread). park() returns once the loop is parked.
  void park();
  void unpark();
  void stop();

  // Only while parked (or before run()).
  void add(PollTask* t) { tasks_.push_back(t); }
  void remove(PollTask* t);
  size_t task_count() const { return tasks_.size(); }
  // Whoever gives this core work notifies it here.
  drivers::Waker& waker() { return waker_; }

  uint64_t iterations() const { return iterations_.load(std::memory_order_relaxed); }
  uint64_t sleeps() const { return sleeps_.load(std::memory_order_relaxed); }

 private:
  enum State : int { kRun, kParkRequested, kParked, kStop };
  void idle_wait(uint64_t now);
  uint64_t earliest_wakeup() const;

  BackoffOptions backoff_;
  std::vector<PollTask*> tasks_;
  drivers::Waker waker_;
  std::atomic<int> state_{kRun};
  std::atomic<uint64_t> iterations_{0};
  std::atomic<uint64_t> sleeps_{0};
  uint64_t last_work_ns_ = 0;
};

}  // namespace lanecast::engine
