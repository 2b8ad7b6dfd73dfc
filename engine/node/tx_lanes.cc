#include "engine/node/tx_lanes.h"

#include <cstddef>

#include "engine/wire/wire.h"

namespace lanecast::engine {

uint32_t TxLanes::flush(drivers::Port& port) {
  uint32_t sent_total = 0;
  for (uint16_t lane = 0; lane < lanes_; ++lane) {
    Queue& q = q_[lane];
    if (q.count == 0) continue;
    if (auth_ != nullptr) seal(q);
    const uint16_t sent = port.tx_burst(lane, q.frames, q.count);
    if (sent < q.count) {  // never spin on a full ring: the tail goes next flush
      counters_.ring_full.add(q.count - sent);
      std::copy(q.frames + sent, q.frames + q.count, q.frames);
    }
    q.count = static_cast<uint16_t>(q.count - sent);
    q.sealed = q.count;  // what is left was sealed
    sent_total += sent;
  }
  return sent_total;
}

void TxLanes::drop_queued() {
  for (Queue& q : q_) {
    for (uint16_t i = 0; i < q.count; ++i) rte_pktmbuf_free(q.frames[i]);
    q.count = q.sealed = 0;
  }
}

void TxLanes::seal(Queue& q) {
  for (uint16_t i = q.sealed; i < q.count; ++i) {
    uint8_t* frame = rte_pktmbuf_mtod(q.frames[i], uint8_t*);
    const auto type = static_cast<wire::FrameType>(frame[link_bytes_ + offsetof(wire::FrameHeader, type)]);
    // The seal starts at the link header's sealed part (Port::sealed_link_bytes).
    auth_->seal_frame(frame + (link_bytes_ - sealed_link_), sealed_link_, wire::frame_seal_at(type));
  }
  q.sealed = q.count;
}

}  // namespace lanecast::engine
