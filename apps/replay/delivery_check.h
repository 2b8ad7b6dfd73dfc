// What one member of an in-process replay delivered, checked on its polling
// core as each message arrives (the stream's handler: no system call, no
// allocation, no wait on that path): in order, and - with --verify or
// --record - equal to the file's bytes, which the read-ahead ring still
// holds for this member (its slot keeps them until it releases them).
//
// With --record the core also notes the moment of delivery; a recording
// thread then writes each message from the ring (the bytes just found equal
// to the ones delivered) and only then releases its record. The ring holds
// at most as many records as a member has slots for times (Options::
// max_records), so the times noted never outrun the slots: the buffers stay
// bounded, and a slow disk holds the reader back, then the publisher - never
// a polling core.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "apps/replay/read_ahead.h"
#include "lanecast/lanecast.h"

namespace lanecast::replay {

class alignas(64) DeliveryCheck {
 public:
  // ra: nullptr to check the order alone. time_slots: 0 without --record,
  // else a power of two, at least the ring's max_records.
  DeliveryCheck(ReadAhead* ra, uint32_t slot, uint64_t time_slots)
      : ra_(ra), slot_(slot), check_(ra), write_(ra), times_(time_slots), mask_(time_slots - 1) {}

  // On the member's polling core.
  void take(uint64_t seq, std::span<const std::byte> data) {
    if (failed_.load(std::memory_order_relaxed)) return;
    const uint64_t due = delivered_.load(std::memory_order_relaxed);
    if (seq != due) return fail("message " + std::to_string(seq) + " where " + std::to_string(due) + " was due");
    if (ra_ != nullptr) {
      RingEntry e;
      if (!check_.peek(e)) return fail("message " + std::to_string(seq) + " delivered before it was published");
      if (e.data.size() != data.size() || (!data.empty() && std::memcmp(e.data.data(), data.data(), data.size()) != 0))
        return fail("message " + std::to_string(seq) + " (packet " + std::to_string(seq % ra_->messages_per_loop() + 1) +
                    " of the file) differs: " + std::to_string(data.size()) + " bytes, the file has " +
                    std::to_string(e.data.size()));
      check_.advance();
      if (times_.empty()) {
        ra_->release(slot_, check_);
      } else if (!abandoned_.load(std::memory_order_relaxed)) {
        if (seq - written_.load(std::memory_order_acquire) >= times_.size())
          return fail("message " + std::to_string(seq) + ": more messages unwritten than the ring may hold");
        times_[seq & mask_] = clock_ns();
      }
    }
    delivered_.store(seq + 1, std::memory_order_release);
  }

  uint64_t delivered() const { return delivered_.load(std::memory_order_acquire); }
  bool failed() const { return failed_.load(std::memory_order_acquire); }
  const std::string& error() const { return error_; }  // once failed()

  // The recording thread: write(delivery_ns, bytes) for each message taken
  // and not yet written, then their records released. Returns how many.
  template <class Write>
  uint64_t drain(Write&& write) {
    const bool failed_before = failed();
    const uint64_t taken = delivered_.load(std::memory_order_acquire);
    const uint64_t from = written_.load(std::memory_order_relaxed);
    uint64_t w = from;
    RingEntry e;
    for (; w < taken && write_.peek(e); ++w) {
      write(times_[w & mask_], e.data);
      write_.advance();
    }
    if (w != from) {
      ra_->release(slot_, write_);
      written_.store(w, std::memory_order_release);
    }
    // A member that failed takes nothing more: once its last good message is
    // written it holds the ring back no longer.
    if (failed_before && w == taken) ra_->detach(slot_);
    return w - from;
  }
  uint64_t written() const { return written_.load(std::memory_order_acquire); }
  // The recording thread stopped (it could not write): the ring is not held
  // for it, and the core notes no more times.
  void abandon_record() {
    abandoned_.store(true, std::memory_order_relaxed);
    ra_->detach(slot_);
  }

 private:
  void fail(std::string why) {
    error_ = std::move(why);
    failed_.store(true, std::memory_order_release);
    if (ra_ != nullptr && times_.empty()) ra_->detach(slot_);
  }

  ReadAhead* ra_;
  uint32_t slot_;
  ReadAhead::Walk check_;  // the polling core's
  ReadAhead::Walk write_;  // the recording thread's
  std::vector<uint64_t> times_;
  uint64_t mask_;
  std::atomic<uint64_t> delivered_{0};
  std::atomic<bool> failed_{false}, abandoned_{false};
  std::string error_;
  alignas(64) std::atomic<uint64_t> written_{0};
};

}  // namespace lanecast::replay
