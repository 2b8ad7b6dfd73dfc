// Publishers an application opened (Member::open_stream), on their way to
// the polling core: the application hands each over through a lock-free
// queue; the core adopts them at its next turn and owns them from then on,
// for the node's life (a publisher's memory is its ring; an application
// thread may still be writing to it after the stream failed). The part of
// a node that owns them, and tells every one of them when this member's
// streams fail.
#pragma once

#include <boost/lockfree/spsc_queue.hpp>

#include <memory>
#include <vector>

#include "engine/stream/stream_state.h"

namespace lanecast::engine::stream {

class PublisherIntake {
 public:
  static constexpr size_t kWaiting = 16;  // publishers handed over and not yet adopted

  PublisherIntake() { adopted_.reserve(kWaiting); }
  ~PublisherIntake() {
    PublisherShared* raw;
    while (queue_.pop(raw)) delete raw;
  }
  PublisherIntake(const PublisherIntake&) = delete;
  PublisherIntake& operator=(const PublisherIntake&) = delete;

  // Application side. False when too many are waiting (p stays the caller's).
  bool offer(std::unique_ptr<PublisherShared>& p) {
    if (!queue_.push(p.get())) return false;
    p.release();  // the queue's pointer owns it now
    return true;
  }
  // Polling core.
  bool waiting() const { return queue_.read_available() > 0; }
  // Adopts every publisher waiting, each handed to fn(PublisherShared&).
  template <typename Fn>
  void adopt(Fn&& fn) {
    PublisherShared* raw;
    while (queue_.pop(raw)) {
      adopted_.emplace_back(raw);  // set-up of a stream, not per message
      fn(*raw);
    }
  }
  // Every adopted publisher learns that its stream failed, and why.
  void fail_all(uint8_t error, uint32_t peer) {
    for (auto& p : adopted_) {
      p->error_peer.store(peer, std::memory_order_relaxed);
      p->error.store(error, std::memory_order_release);
    }
  }

 private:
  boost::lockfree::spsc_queue<PublisherShared*, boost::lockfree::capacity<kWaiting>> queue_;
  std::vector<std::unique_ptr<PublisherShared>> adopted_;
};

}  // namespace lanecast::engine::stream
