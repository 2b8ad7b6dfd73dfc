// A polling core: one thread (an EAL worker lcore) that runs its tasks (nodes,
// the fabric's switch) in a loop, and backs off when idle so that many nodes
// can share few cores. Tasks are added and removed only while it is parked.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

namespace lanecast::engine {

class PollTask {
 public:
  virtual ~PollTask() = default;
  // One iteration's work at time now; returns how much was done (0 = idle).
  virtual uint32_t poll(uint64_t now_ns) = 0;
  // When the task next needs the core if nothing arrives (UINT64_MAX: never).
  virtual uint64_t next_wakeup_ns() const = 0;
};

struct BackoffOptions {
  uint64_t spin_ns = 200'000;         // keep polling this long after the last work
  uint64_t max_sleep_ns = 50'000;     // longest nap; also bounds reaction to new work
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

  uint64_t iterations() const { return iterations_.load(std::memory_order_relaxed); }
  uint64_t sleeps() const { return sleeps_.load(std::memory_order_relaxed); }

 private:
  enum State : int { kRun, kParkRequested, kParked, kStop };
  void idle_wait(uint64_t now);

  BackoffOptions backoff_;
  std::vector<PollTask*> tasks_;
  std::atomic<int> state_{kRun};
  std::atomic<uint64_t> iterations_{0};
  std::atomic<uint64_t> sleeps_{0};
  uint64_t last_work_ns_ = 0;
};

}  // namespace lanecast::engine
