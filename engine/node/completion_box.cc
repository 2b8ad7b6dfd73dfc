#include "engine/node/completion_box.h"

#include <linux/futex.h>
#include <rte_pause.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <climits>

#include "engine/runtime/clock.h"
#include "engine/reliable/seq.h"

namespace lanecast::engine {
namespace {

uint32_t* word(std::atomic<uint32_t>& a) { return reinterpret_cast<uint32_t*>(&a); }
static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t));

void futex_wait(std::atomic<uint32_t>& a, uint32_t seen, uint64_t timeout_ns) {
  timespec ts{static_cast<time_t>(timeout_ns / 1'000'000'000), static_cast<long>(timeout_ns % 1'000'000'000)};
  syscall(SYS_futex, word(a), FUTEX_WAIT_PRIVATE, seen, timeout_ns == UINT64_MAX ? nullptr : &ts, nullptr, 0);
}

void futex_wake_all(std::atomic<uint32_t>& a) {
  syscall(SYS_futex, word(a), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

// Long enough to catch a completion that is a hop away, short enough that a
// waiter does not take a CPU the polling cores need.
constexpr uint64_t kSpinNs = 5'000;

}  // namespace

void CompletionBox::publish(const CompletionRecord& rec) {
  records_[rec.op % kSlots] = rec;
  completed_.store(rec.op, std::memory_order_seq_cst);
  released_.store(rec.op, std::memory_order_seq_cst);
  if (waiters_.load(std::memory_order_seq_cst) != 0) {
    futex_wake_all(completed_);
    futex_wake_all(released_);
  }
}

void CompletionBox::release(uint32_t op) {
  released_.store(op, std::memory_order_seq_cst);
  if (waiters_.load(std::memory_order_seq_cst) != 0) futex_wake_all(released_);
}

bool CompletionBox::ready(uint32_t op) const {
  return !reliable::seq_before(completed_.load(std::memory_order_acquire), op);
}

bool CompletionBox::released(uint32_t op) const {
  return !reliable::seq_before(released_.load(std::memory_order_acquire), op);
}

bool CompletionBox::wait(uint32_t op, uint64_t timeout_ns, bool local) {
  std::atomic<uint32_t>& word = local ? released_ : completed_;
  const auto came = [&] { return !reliable::seq_before(word.load(std::memory_order_seq_cst), op); };
  if (came()) return true;
  const uint64_t start = now_ns();
  const uint64_t end = timeout_ns == UINT64_MAX || UINT64_MAX - start < timeout_ns ? UINT64_MAX : start + timeout_ns;
  while (now_ns() - start < kSpinNs) {
    if (came()) return true;
    rte_pause();
  }
  waiters_.fetch_add(1, std::memory_order_seq_cst);
  bool done;
  for (;;) {
    const uint32_t seen = word.load(std::memory_order_seq_cst);
    done = !reliable::seq_before(seen, op);
    if (done) break;
    const uint64_t now = now_ns();
    if (now >= end) break;
    futex_wait(word, seen, end == UINT64_MAX ? UINT64_MAX : end - now);
  }
  waiters_.fetch_sub(1, std::memory_order_seq_cst);
  return done;
}

}  // namespace lanecast::engine
