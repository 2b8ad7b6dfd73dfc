// The first 24 bytes of a message as a ring of delivered messages holds it
// (record_ring.h), before the message's bytes: the engine's delivery ring
// (Member::next()) and each subscriber's delivery ring of `lanecast daemon`
// (client_file.h) alike.
#pragma once

#include <cstdint>

namespace lanecast::ipc {

struct DeliveredHead {
  uint64_t seq;           // the publisher's sequence number, from 0
  uint64_t timestamp_ns;  // the publisher's clock when it published
  uint32_t publisher;     // its rank
  uint16_t stream;        // its stream
  uint16_t reserved;
};
static_assert(sizeof(DeliveredHead) == 24);

}  // namespace lanecast::ipc

namespace lanecast::engine::stream {
using ipc::DeliveredHead;
}  // namespace lanecast::engine::stream
