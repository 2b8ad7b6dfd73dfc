// The daemon's notices to one application (the stream failed, evicted,
// shutting down), oldest first: fixed-size records on a RecordRing in the
// client's file, so the daemon - the producer - keeps its position to
// itself like in every other ring it shares, and a scribbled consumer
// position makes the ring corrupt instead of sending the daemon's writes
// elsewhere. Notices are hints: the states they announce are also in the
// client's header (evicted, daemon_stopping), so a full ring loses nothing
// an application cannot see.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>

#include "ipc/record_ring.h"

namespace lanecast::ipc {

struct Notice {
  enum Kind : uint32_t { None = 0, StreamFailed = 1, Evicted = 2, ShuttingDown = 3 } kind = None;
  uint32_t peer = UINT32_MAX;  // StreamFailed: the member it names
  uint64_t at_ns = 0;          // CLOCK_MONOTONIC
};
static_assert(sizeof(Notice) == 16);

class NoticeRing {
 public:
  // Room for this many notices: the ring's capacity (notice_bytes()).
  static constexpr uint64_t kNotices = 64;
  static constexpr uint64_t capacity() { return kNotices * RecordRing::footprint(sizeof(Notice)); }

  NoticeRing() = default;
  explicit NoticeRing(RecordRing ring) : ring_(ring) {}
  bool valid() const { return ring_.valid(); }
  bool corrupt() const { return ring_.corrupt(); }

  // Producer. False: the ring is full or corrupt (the notice is lost).
  bool push(const Notice& n) {
    uint8_t* at = ring_.reserve(sizeof n, 0);
    if (at == nullptr) return false;
    std::memcpy(at, &n, sizeof n);
    ring_.commit();
    return true;
  }
  // Consumer: the oldest notice. A record of another size is no notice: it
  // is skipped (each call takes at most kNotices records off the ring).
  std::optional<Notice> pop() {
    for (uint64_t i = 0; i < kNotices; ++i) {
      const RecordView r = ring_.peek();
      if (r.data == nullptr) return std::nullopt;
      if (r.len != sizeof(Notice)) {
        ring_.pop();
        continue;
      }
      Notice n;
      std::memcpy(&n, r.data, sizeof n);
      ring_.pop();
      return n;
    }
    return std::nullopt;
  }

 private:
  RecordRing ring_;
};

}  // namespace lanecast::ipc
