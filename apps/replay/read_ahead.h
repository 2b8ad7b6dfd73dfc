// The capture read ahead of the replaying thread. A reader thread fills a
// ring of fixed size with the next messages of the file - each with its due
// time under the schedule - loop after loop, opening the file again for each;
// the replaying thread takes them from memory, so it never reads the file,
// let alone waits for the disk, at a packet's due time. A capture that fits a
// quarter of the ring is kept after its first loop and looped from the copy.
// Memory is the ring's (and at most a quarter more), whatever the capture's
// size or --loop.
//
// Records are taken in order by walks: slot 0 is the publisher's, slots
// 1..checkers belong to members that check their deliveries against the
// file's bytes. A record's space is reused once every slot has released it,
// so a member still checking a message keeps its bytes in the ring; a slot
// detached (a member that failed) holds nothing back.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "apps/replay/pcap_source.h"
#include "apps/replay/replay_schedule.h"

namespace lanecast::replay {

struct RingEntry {
  uint64_t due_ns = 0;     // from the start of its loop
  bool loop_start = false;
  std::span<const std::byte> data;
};

class ReadAhead {
 public:
  struct Options {
    CaptureSpec capture;
    Timing timing;
    uint64_t loops = 1;
    uint64_t messages = 0;  // per loop, as the first pass found: the file must not change
    uint64_t bytes = 8u << 20;                // the ring (raised to hold four of the largest records)
    uint64_t max_records = UINT64_MAX;        // messages held at once, at most
    uint32_t checkers = 0;                    // slots besides the publisher's
  };

  // One slot's way through the ring. Used by one thread at a time.
  class Walk {
   public:
    explicit Walk(const ReadAhead* ra) : ra_(ra) {}
    // The record at the walk, or false when the reader has not written it yet.
    bool peek(RingEntry& out);
    void advance();
    uint64_t taken() const { return records_; }  // records advanced past

   private:
    friend class ReadAhead;
    const ReadAhead* ra_;
    uint64_t pos_ = 0, records_ = 0;
    uint32_t len_ = 0;  // of the record peeked
  };

  // Opens the file (throws as CaptureReader) and starts the reader thread.
  explicit ReadAhead(const Options& o);
  ~ReadAhead();
  ReadAhead(const ReadAhead&) = delete;
  ReadAhead& operator=(const ReadAhead&) = delete;

  // Waits until the ring is full or the reader is through; before the clock
  // starts, so the first due times find their messages in memory.
  void fill() const;
  // The records up to `w` may be reused as far as `slot` is concerned.
  void release(uint32_t slot, const Walk& w);
  // `slot` holds nothing back any more.
  void detach(uint32_t slot);
  // Every record written (and the reader gone).
  bool finished() const { return finished_.load(std::memory_order_acquire); }
  // The reader stopped early: failure() says why.
  bool failed() const { return failed_.load(std::memory_order_acquire); }
  std::string failure() const;
  uint64_t messages_per_loop() const { return o_.messages; }
  uint64_t ring_bytes() const { return cap_; }

 private:
  struct alignas(64) Tail {
    std::atomic<uint64_t> pos{0}, records{0};
  };
  void read_all();
  bool write(uint64_t due, bool loop_start, std::span<const std::byte> data);
  bool room_for(uint64_t end, uint64_t records) const;

  Options o_;
  uint64_t cap_;
  std::unique_ptr<std::byte[]> ring_;
  CaptureReader reader_;
  alignas(64) std::atomic<uint64_t> head_{0};  // bytes written, records complete below it
  std::vector<Tail> tails_;
  uint64_t written_pos_ = 0, written_records_ = 0;  // the reader thread's own
  std::atomic<bool> stop_{false}, waiting_{false}, finished_{false}, failed_{false};
  mutable std::mutex failure_mutex_;
  std::string failure_;
  std::thread thread_;
};

}  // namespace lanecast::replay
