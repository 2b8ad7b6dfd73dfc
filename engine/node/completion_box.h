// Completions of one member, from its polling core to the application thread
// that waits for them.
//
// A member's broadcasts complete in the order they were posted, so the core
// publishes "every operation up to N has completed" (one atomic) and each
// outcome in a slot of a small ring (op % kSlots). The application reads a
// slot after seeing the counter pass its operation; Member makes sure a slot
// is never reused while a Completion still needs it (lanecast.h). Nothing
// queues up: an outcome nobody waits for is simply overwritten later.
//
// Waiting sleeps in the kernel (a futex on the counter) after a short spin,
// and the core wakes the waiter right when it publishes - only when someone
// waits, so a core whose members nobody waits for never makes a system call.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "engine/node/op_types.h"

namespace lanecast::engine {

class CompletionBox {
 public:
  static constexpr uint32_t kSlots = 64;

  // Core side: operations in order. publish() also releases the operation.
  void publish(const CompletionRecord& rec);
  // The member is done with operation `op`'s buffer before it completes
  // (Node::buffer_done): the application may leave it (Completion::wait_local).
  void release(uint32_t op);

  // Application side.
  // Whether operation `op` (posted) has completed.
  bool ready(uint32_t op) const;
  // Whether it was released (or completed).
  bool released(uint32_t op) const;
  // Its outcome. Precondition: ready(op), and the slot not reused since.
  const CompletionRecord& record(uint32_t op) const { return records_[op % kSlots]; }
  // Sleeps until ready(op) - with `local`, released(op) - or `timeout_ns`
  // passed (UINT64_MAX: no limit); returns whether it came.
  bool wait(uint32_t op, uint64_t timeout_ns, bool local = false);
  uint32_t completed() const { return completed_.load(std::memory_order_acquire); }

 private:
  std::array<CompletionRecord, kSlots> records_{};
  alignas(64) std::atomic<uint32_t> completed_{0};  // the last completed operation
  std::atomic<uint32_t> released_{0};                // the last released (or completed) operation
  alignas(64) std::atomic<uint32_t> waiters_{0};
};

}  // namespace lanecast::engine
