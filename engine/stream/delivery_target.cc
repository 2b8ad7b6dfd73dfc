// Where in-order stream messages go (delivery_target.h).
#include "engine/stream/delivery_target.h"

#include <cstring>

namespace lanecast::engine::stream {

void DeliveryTarget::set_handler(Handler h) {
  handler_ = std::move(h);
  has_handler_.store(static_cast<bool>(handler_), std::memory_order_release);
}

void DeliveryTarget::open(uint64_t ring_bytes, uint64_t max_message) {
  if (has_handler_.load(std::memory_order_acquire)) {
    if (assembly_.empty()) assembly_.resize(max_message);
    return;
  }
  if (ring_hdr_.load(std::memory_order_relaxed) != nullptr) return;
  const size_t bytes = RecordRing::bytes_for(ring_bytes);
  ring_mem_ = aligned_bytes(bytes);
  std::memset(ring_mem_.get(), 0, bytes);  // no page faults on the delivery path later
  RecordRingHeader* h = RecordRing::init(ring_mem_.get(), ring_bytes);
  ring_ = RecordRing(h);
  ring_hdr_.store(h, std::memory_order_release);
}

uint8_t* DeliveryTarget::begin(const DeliveredHead& head, uint64_t len) {
  if (to_handler()) return assembly_.size() >= len ? assembly_.data() : nullptr;
  uint8_t* dst = ring_.reserve(sizeof head + len, 0);
  if (dst == nullptr) {
    counters_.full.add();
    return nullptr;
  }
  std::memcpy(dst, &head, sizeof head);
  return dst + sizeof head;
}

void DeliveryTarget::finish(const DeliveredHead& head, const uint8_t* bytes, uint64_t len) {
  if (to_handler()) handler_(head, bytes, static_cast<uint32_t>(len));
  else ring_.commit();
}

}  // namespace lanecast::engine::stream
