// Waking a sleeping polling core when work arrives.
//
// A polling core that found nothing to do for a while sleeps instead of
// spinning (many members share few cores). Whoever makes work visible to it -
// the switch putting frames into a member's receive ring, an application
// posting a broadcast, a kernel socket receiving a frame - must then wake it,
// and nobody may pay a system call while the core is awake and busy.
//
// The protocol is the classic one of a flag and a fence on each side:
//
//   core:      begin_sleep()          producer:  make the work visible
//              look for work once more           notify()
//              sleep(timeout) unless found        (a system call only if the
//              end_sleep()                         core said it sleeps)
//
// begin_sleep() publishes "sleeping" before the core's last look, and notify()
// checks it after the producer's work is visible; with a full fence on both
// sides at least one of them sees the other, so no wake-up is lost. Ports
// whose arrivals come from the kernel (an af_packet socket) add their file
// descriptor instead (add_fd): the kernel wakes the core through it.
#pragma once

#include <poll.h>

#include <atomic>
#include <cstdint>
#include <vector>

namespace lanecast::drivers {

class Waker {
 public:
  Waker();
  ~Waker();
  Waker(const Waker&) = delete;
  Waker& operator=(const Waker&) = delete;

  // Producer side, any thread: call after the work is visible (enqueued).
  // Costs a fence and a load while the core is awake.
  void notify() {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (sleeping_.load(std::memory_order_relaxed) && sleeping_.exchange(false, std::memory_order_acq_rel))
      kick();
  }

  // Core side, the polling thread only.
  void begin_sleep() {
    sleeping_.store(true, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
  // Sleeps until notify(), a readable fd, or `timeout_ns` (UINT64_MAX: no
  // timeout). Returns true when woken by a notify or an fd.
  bool sleep(uint64_t timeout_ns);
  void end_sleep();

  // Control path (while the core is parked): extra sources that wake it when
  // readable, e.g. a kernel socket.
  void add_fd(int fd);
  void remove_fd(int fd);

  uint64_t kicks() const { return kicks_.load(std::memory_order_relaxed); }

 private:
  void kick();

  alignas(64) std::atomic<bool> sleeping_{false};
  std::atomic<uint64_t> kicks_{0};
  int event_fd_ = -1;
  std::vector<pollfd> fds_;  // event_fd_ first, then the ports' sources
};

}  // namespace lanecast::drivers
