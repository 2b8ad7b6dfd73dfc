// The application's side of streams: Publisher (its ring of messages for
// the core, and the window it checks against what the core says is stable)
// and Member::next() (the ring of delivered messages), or a handler the core
// calls. The polling core's side is engine/stream/streams.h.
#include <stdexcept>
#include <thread>

#include "engine/runtime/clock.h"
#include "lanecast/lanecast.h"
#include "engine/api/member_internals.h"
#include "engine/node/node.h"
#include "engine/runtime/poller.h"
#include "engine/stream/back_off.h"
#include "ipc/delivery_reader.h"

namespace lanecast {

namespace {

// Runs the member's poller on this thread (engines that progress in calls)
// until `done` or `deadline`.
bool drive(engine::Node* node, bool (*done)(const void*), const void* arg, uint64_t deadline) {
  engine::Poller* p = node->driver();
  return p != nullptr && p->drive_until(done, arg, deadline);
}

// One turn of the engine on this thread, when it progresses in calls: a
// publisher or a reader that keeps finding work never waits, so without
// these its member would make no progress while it works.
void turn(engine::Node* node) {
  if (node->driver() != nullptr) drive(node, [](const void*) { return true; }, nullptr, engine::now_ns());
}

}  // namespace

namespace engine::stream {

class PublisherSide {
 public:
  PublisherSide(Node* node, PublisherShared* shared)
      : node_(node), shared_(shared), ring_(shared->ring), opts_(node->config().streams),
        max_message_(node->streams().max_message()) {}

  PublishResult publish(std::span<const std::byte> msg) {
    if (shared_->error.load(std::memory_order_acquire) != 0) return PublishResult::Failed;
    if (msg.size() > max_message_) return PublishResult::TooLarge;
    const uint64_t stable_msgs = shared_->stable_msgs.load(std::memory_order_acquire);
    const uint64_t stable_bytes = shared_->stable_bytes.load(std::memory_order_relaxed);
    if (published_ - stable_msgs >= opts_.window_messages ||
        (published_ > stable_msgs && published_bytes_ - stable_bytes + msg.size() > opts_.window_bytes))
      return PublishResult::WouldBlock;
    uint8_t* at = ring_.reserve(8 + msg.size(), 0);
    if (at == nullptr) return PublishResult::WouldBlock;
    const uint64_t ts = host_ns();
    std::memcpy(at, &ts, 8);
    if (!msg.empty()) std::memcpy(at + 8, msg.data(), msg.size());
    ring_.commit();
    ++published_;
    published_bytes_ += msg.size();
    node_->notify_core();
    // Progress in calls: a frame's worth published, the engine turns once
    // (so batches still fill, and the stream moves while the loop publishes).
    if (node_->driver() != nullptr && (unturned_ += 8 + msg.size()) >= node_->config().segment_bytes) {
      unturned_ = 0;
      turn(node_);
    }
    return PublishResult::Ok;
  }

  Node* node() const { return node_; }
  PublisherShared* shared() const { return shared_; }
  uint64_t published() const { return published_; }
  uint64_t max_message() const { return max_message_; }

 private:
  Node* node_;
  PublisherShared* shared_;
  RecordRing ring_;
  StreamOptions opts_;
  uint64_t max_message_;
  uint64_t published_ = 0, published_bytes_ = 0;
  uint64_t unturned_ = 0;  // bytes published since the engine last turned here
};

class DeliverySide {
 public:
  explicit DeliverySide(RecordRingHeader* h) : reader_(h) {}
  bool next(StreamMessage& out) { return reader_.next(out); }
  // Progress in calls: every 16 messages taken, the engine turns once.
  bool due_turn() { return ++taken_ % 16 == 0; }

 private:
  DeliveryReader reader_;
  uint32_t taken_ = 0;
};

}  // namespace engine::stream

uint64_t clock_ns() { return engine::host_ns(); }

namespace {

Status status_of(engine::OpError e, Rank peer, const char* what) {
  if (e == engine::OpError::None) return {};
  Status s;
  s.error = error_kind(e);
  s.peer = peer;
  s.message = std::string(what);
  switch (e) {
    case engine::OpError::PeerSilent:
      s.message += ": rank " + std::to_string(peer) + " stopped acknowledging";
      break;
    case engine::OpError::GroupBroken:
      s.message += ": the group lost rank " + (peer == kNoRank ? std::string("?") : std::to_string(peer));
      break;
    case engine::OpError::Internal:
      s.message += ": the publisher's ring was damaged";
      break;
    default:
      s.message += ": failed";
      break;
  }
  return s;
}

}  // namespace

Publisher::Publisher() = default;
Publisher::Publisher(Publisher&&) noexcept = default;
Publisher& Publisher::operator=(Publisher&&) noexcept = default;
Publisher::~Publisher() = default;

PublishResult Publisher::publish(std::span<const std::byte> message) {
  if (!side_) throw std::logic_error("publish: this Publisher has no stream");
  return side_->publish(message);
}

PublishResult Publisher::publish_for(std::span<const std::byte> message, std::chrono::nanoseconds timeout) {
  const uint64_t deadline = engine::now_ns() + static_cast<uint64_t>(std::max<int64_t>(0, timeout.count()));
  for (uint32_t tries = 0;; ++tries) {
    const PublishResult r = publish(message);
    if (r != PublishResult::WouldBlock || engine::now_ns() >= deadline) return r;
    engine::Node* node = side_->node();
    if (node->driver() != nullptr) {
      // Turn the engine here until something is acknowledged as stable.
      struct Arg {
        const engine::stream::PublisherShared* s;
        uint64_t stable;
      } arg{side_->shared(), side_->shared()->stable_msgs.load()};
      drive(
          node,
          [](const void* a) {
            const auto* x = static_cast<const Arg*>(a);
            return x->s->stable_msgs.load(std::memory_order_acquire) != x->stable || x->s->error.load() != 0;
          },
          &arg, std::min(deadline, engine::now_ns() + 1'000'000));
    } else {
      engine::stream::back_off(tries);
    }
  }
}

uint64_t Publisher::published() const { return side_ ? side_->published() : 0; }
uint64_t Publisher::stable() const {
  return side_ ? side_->shared()->stable_msgs.load(std::memory_order_acquire) : 0;
}
uint64_t Publisher::max_message() const { return side_ ? side_->max_message() : 0; }
uint16_t Publisher::stream() const { return side_ ? side_->shared()->index : 0; }
Status Publisher::status() const {
  if (!side_) return {};
  const auto* s = side_->shared();
  return status_of(static_cast<engine::OpError>(s->error.load(std::memory_order_acquire)),
                   s->error_peer.load(std::memory_order_relaxed), "stream");
}

Publisher Member::open_stream(uint16_t index) {
  const StreamOptions& o = node_->config().streams;
  if (index >= o.streams_per_member)
    throw std::invalid_argument("open_stream: index " + std::to_string(index) + " out of range (below " +
                                std::to_string(o.streams_per_member) + ": StreamOptions::streams_per_member, " +
                                "the group file's streams_per_member)");
  if (streams_opened_ >> index & 1)
    throw std::invalid_argument("open_stream: stream " + std::to_string(index) + " of rank " +
                                std::to_string(rank()) + " is open already");
  auto shared = std::make_unique<engine::stream::PublisherShared>();
  shared->index = index;
  const size_t bytes = engine::stream::RecordRing::bytes_for(o.window_bytes);
  shared->ring_mem = engine::stream::aligned_bytes(bytes);
  // Every page touched now: a first write to a fresh page is a fault, and
  // a publisher keeping time (a replay) must not take a thousand of them.
  std::memset(shared->ring_mem.get(), 0, bytes);
  shared->ring = engine::stream::RecordRing::init(shared->ring_mem.get(), o.window_bytes);
  engine::stream::PublisherShared* raw = shared.get();
  if (!node_->open_publisher(std::move(shared)))
    throw std::runtime_error("open_stream: rank " + std::to_string(rank()) + " has 16 streams waiting to open");
  streams_opened_ |= uint64_t{1} << index;
  Publisher p;
  p.side_ = std::make_unique<engine::stream::PublisherSide>(node_, raw);
  return p;
}

bool Member::next(StreamMessage& out) {
  if (!delivery_) {
    engine::stream::RecordRingHeader* h = node_->streams().delivery_ring();
    if (h == nullptr) {
      turn(node_);
      h = node_->streams().delivery_ring();
      if (h == nullptr) return false;
    }
    delivery_ = std::make_shared<engine::stream::DeliverySide>(h);
  }
  if (delivery_->next(out)) {
    if (node_->driver() != nullptr && delivery_->due_turn()) turn(node_);
    return true;
  }
  if (node_->driver() == nullptr) return false;
  turn(node_);
  return delivery_->next(out);
}

bool Member::next_for(StreamMessage& out, std::chrono::nanoseconds timeout) {
  const uint64_t deadline = engine::now_ns() + static_cast<uint64_t>(std::max<int64_t>(0, timeout.count()));
  for (uint32_t tries = 0;; ++tries) {
    if (next(out)) return true;
    if (engine::now_ns() >= deadline) return false;
    if (node_->driver() != nullptr) {
      drive(
          node_,
          [](const void* n) {
            auto* ring = static_cast<const engine::Node*>(n)->streams().delivery_ring();
            return ring != nullptr && ring->head.load(std::memory_order_acquire) != ring->tail.load(std::memory_order_acquire);
          },
          node_, deadline);
    } else {
      engine::stream::back_off(tries);
    }
  }
}

void Member::on_message(std::function<void(const StreamMessage&)> handler) {
  if (!handler) {
    node_->streams().set_message_handler({});
    return;
  }
  node_->streams().set_message_handler([h = std::move(handler)](const engine::stream::DeliveredHead& d, const uint8_t* data,
                                                      uint32_t len) {
    StreamMessage m;
    m.publisher = d.publisher;
    m.stream = d.stream;
    m.seq = d.seq;
    m.timestamp_ns = d.timestamp_ns;
    m.data = std::span<const std::byte>(reinterpret_cast<const std::byte*>(data), len);
    h(m);
  });
}

std::vector<Member::StreamStats> Member::streams() const {
  std::vector<StreamStats> out;
  for (size_t i = 0; i < node_->streams().slots(); ++i) {
    const engine::stream::StreamMirror* mirror = node_->streams().mirror(i);
    if (mirror == nullptr) continue;  // no stream has used the slot
    const engine::stream::StreamMirror& m = *mirror;
    StreamStats s;
    s.publisher = m.publisher.load(std::memory_order_relaxed);
    s.stream = static_cast<uint16_t>(m.index.load(std::memory_order_relaxed));
    s.delivered_messages = m.delivered_msgs.load(std::memory_order_relaxed);
    s.delivered_bytes = m.delivered_bytes.load(std::memory_order_relaxed);
    s.frames_held = m.batches_held.load(std::memory_order_relaxed);
    s.slowest = m.slowest.load(std::memory_order_relaxed);
    s.slowest_lag = m.slowest_lag.load(std::memory_order_relaxed);
    s.evicted = m.evicted.load(std::memory_order_acquire);
    s.evicted_members = m.evicted_members.load(std::memory_order_relaxed);
    out.push_back(s);
  }
  return out;
}

std::vector<Member::PeerStats> Member::peers() const {
  std::vector<PeerStats> out;
  for (Rank r = 0; r < node_->config().nodes; ++r) {
    if (r == rank()) continue;
    const auto& c = node_->peer_counters(r);
    out.push_back(PeerStats{r, c.tx_data.get(), c.tx_retransmits.get(), c.rx_data.get()});
  }
  return out;
}

Status Member::stream_status() const {
  Status s = status_of(node_->streams().error(), node_->streams().error_peer(), "streams");
  if (s.ok() && node_->streams().evicted()) {
    s.error = ErrorKind::Evicted;
    s.message = "streams: this member left a stream for being slow - its application took none of its messages "
                "for " + std::to_string(node_->config().streams.evict_after_ms) +
                " ms (StreamOptions::evict_after_ms); streams() says which";
  }
  return s;
}

}  // namespace lanecast
