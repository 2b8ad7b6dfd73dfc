// A polling core: one thread (an EAL worker lcore) that runs its tasks (nodes,
// the fabric's switch) in a loop. While a task is busy (a broadcast running,
// frames in flight) the core keeps polling through gaps of up to busy_spin_ns:
// going to sleep and waking costs a few system calls per member (arming and
// disarming their wake-ups) and a wake-up latency, which a pipeline paying
// them between every pair of frames turned into half its throughput. Idle for
// spin_ns (nothing running), or busy but without work for busy_spin_ns, it
// sleeps until a task's next timer - and, for tasks whose arrivals wake it
// (drivers/wake.h: ring ports, af_packet wake-up sockets, posted broadcasts),
// until something arrives; a task that cannot wake it bounds the nap to
// max_sleep_ns. So many members can share few cores, and an idle member costs
// a broadcast no nap at every hop. Tasks are added and removed only while the
// core is parked.
//
// A poller has no thread of its own when the engine progresses in calls
// (EngineOptions::progress_in_calls): application threads then run its loop
// inside their waits (drive_until), one at a time, the way MPI libraries make
// progress inside their calls. A process with one member then runs one thread
// instead of two: on a host with fewer CPUs than engines that saves a thread
// switch at every completion.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "drivers/wake.h"

namespace lanecast::engine {

class PollTask {
 public:
  virtual ~PollTask() = default;
  // One turn's work at time now, in two halves: what arrived, then what to
  // send. A core runs every task's rx half before any task's tx half: on a
  // kernel-backed port a transmit is a system call that carries the frame
  // through the kernel's network, and members sharing a core should not wait
  // for each other's transmits to see what has already arrived for them (a
  // 2-byte broadcast to 7 members on one core: the last held it 60 us later
  // than the first). Each returns how much was done (0 = idle).
  virtual uint32_t poll_rx(uint64_t now_ns) = 0;
  virtual uint32_t poll_tx(uint64_t now_ns) { (void)now_ns; return 0; }
  // When the task next needs the core if nothing arrives (UINT64_MAX: never).
  virtual uint64_t next_wakeup_ns() const = 0;
  // Just before the core sleeps: arm what wakes it on this task's arrivals.
  // Returns false when arrivals cannot wake it (the nap is then bounded).
  virtual bool arm_wakeup() { return false; }
  // After the core woke.
  virtual void disarm_wakeup() {}
  // Whether work is under way (a broadcast running, frames in flight): the
  // core then keeps polling through short gaps.
  virtual bool busy() const { return false; }
  // Whether the task's next work is frames its pacer holds back until a
  // time next_wakeup_ns() gives: nothing but that time (or an arrival)
  // makes work for it, so a core on shared CPUs may nap until then.
  virtual bool pacer_holds(uint64_t now_ns) const {
    (void)now_ns;
    return false;
  }
};

struct BackoffOptions {
  uint64_t spin_ns = 200'000;      // keep polling this long after the last work
  uint64_t busy_spin_ns = 5'000'000;  // the same while a task is busy
  uint64_t max_sleep_ns = 50'000;  // longest nap when a task's arrivals cannot wake the core
  // Between idle polls, give the CPU to whatever else is runnable on it
  // (sched_yield) instead of pausing: for engines that share CPUs with other
  // engines (several member processes on one host).
  bool yield_when_idle = false;
};

class Poller {
 public:
  // driven_in_calls: no thread runs run(); application threads drive it.
  explicit Poller(const BackoffOptions& b, bool driven_in_calls = false)
      : backoff_(b), in_calls_(driven_in_calls) {}
  // Runs until stop(); call on the thread that should poll.
  void run();
  // A poller driven in calls: runs its loop on the calling thread until
  // done(arg) or the engine clock reaches deadline_ns, sleeping when idle as
  // run() does, then a few more turns while they find work (an ack due now
  // goes out before the caller leaves). Returns false at once, without
  // polling, when another thread is driving it.
  bool drive_until(bool (*done)(const void*), const void* arg, uint64_t deadline_ns);
  bool driven_in_calls() const { return in_calls_; }
  // When a drive_until last ended (engine clock; 0: never): how long the
  // members have gone without a turn.
  uint64_t last_driven_ns() const { return last_driven_ns_.load(std::memory_order_relaxed); }

  // Control (any thread). park() returns once the loop is parked: for a
  // poller driven in calls, once no thread drives it (a thread inside
  // drive_until leaves it at its next turn, returning false as when another
  // thread drives) and none can until unpark().
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
  // The longest time from one turn's start to the next's with no nap between
  // them (the core meant to be running all along), and how many such cycles
  // passed kLongCycleNs: a core the kernel gave to something else, or a turn
  // that itself took that long. Every message waiting on the core waits that
  // long too, so a tail this long is the machine's or the turn's, not a
  // timer's (as Aeron's duty-cycle tracker reports its agents' stalls).
  // reset_longest_cycle() (any thread) starts a new maximum.
  uint64_t longest_cycle_ns() const { return longest_cycle_ns_.load(std::memory_order_relaxed); }
  uint64_t long_cycles() const { return long_cycles_.load(std::memory_order_relaxed); }
  void reset_longest_cycle() { longest_cycle_ns_.store(0, std::memory_order_relaxed); }
  static constexpr uint64_t kLongCycleNs = 1'000'000;

 private:
  enum State : int { kRun, kParkRequested, kParked, kStop };
  // One turn over every task (every rx half, then every tx half); `now` is
  // the clock at its end. Returns the work done.
  uint32_t turn(uint64_t& now);
  // After an idle turn at `now`: pause, yield or sleep (at most until
  // limit_ns), as the backoff says.
  void back_off(uint64_t now, uint64_t limit_ns);
  // Sleeps if nothing is due; false when it neither slept nor found work.
  bool idle_wait(uint64_t now, uint64_t limit_ns);
  uint64_t earliest_wakeup() const;
  bool any_busy() const;
  // Every busy task waits for its pacer (and one at least is busy).
  bool only_pacers_hold(uint64_t now) const;
  // A turn starts at `start`: the cycle since the last one is measured
  // unless the core napped, parked or was not driven in between.
  void note_cycle(uint64_t start);

  BackoffOptions backoff_;
  const bool in_calls_;
  std::atomic<bool> driving_{false};  // an application thread is in drive_until (or park() holds it)
  std::atomic<bool> park_requested_{false};  // driven in calls: park() waits for the driver to leave
  std::atomic<uint64_t> last_driven_ns_{0};
  std::vector<PollTask*> tasks_;
  drivers::Waker waker_;
  std::atomic<int> state_{kRun};
  std::atomic<uint64_t> iterations_{0};
  std::atomic<uint64_t> sleeps_{0};
  std::atomic<uint64_t> longest_cycle_ns_{0};
  std::atomic<uint64_t> long_cycles_{0};
  uint64_t last_turn_ns_ = 0;  // the last turn's start; 0: after a nap, not measured
  uint64_t last_work_ns_ = 0;
  // When the core last woke from a sleep. A wake-up can come before the frame
  // that caused it is visible: on af_packet the kernel hands a frame to the
  // wake-up socket and to the PMD's ring one after the other, and the core,
  // woken on another CPU, may look at the ring in between. So after a
  // wake-up the core polls a little while before it may sleep again.
  uint64_t woke_ns_ = 0;
  static constexpr uint64_t kAfterWakeNs = 50'000;
  // The shortest pacer gap a core naps through. A nap and its wake-up cost
  // tens of microseconds on shared CPUs, paid at every frame: napping
  // through the 60 us gaps of a 200 Mbit/s lane cut 8 member processes'
  // broadcasts from 0.76-0.92 to 0.63-0.70 of the line, while the gaps
  // worth giving away are those of a lane at its rate controller's start
  // (100 Mbit/s: 120 us a frame) or below.
  static constexpr uint64_t kPacerNapNs = 100'000;
  static constexpr int kFlushTurns = 4;
};

}  // namespace lanecast::engine
