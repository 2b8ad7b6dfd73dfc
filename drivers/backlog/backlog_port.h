// A port whose rx_burst() returns, before anything the port beneath
// receives, a backlog of frames that arrived earlier - each on its lane, in
// the order given. A member's discovery reads the port bare, before the
// group's table exists, and keeps what a faster member already sent to the
// group (engine/bootstrap/wire_discovery.h); the decorators that emulate
// distance, multicast loss and faults need that table, so they are stacked
// only after it. With the backlog at the bottom of that stack, those early
// frames pass through every decorator as the frames after them do - handed to
// the node directly, they were spared the emulated delay, loss and faults.
#pragma once

#include <memory>
#include <vector>

#include "drivers/forwarding_port.h"

namespace lanecast::drivers {

class BacklogPort final : public ForwardingPort {
 public:
  struct Frame {
    rte_mbuf* frame;
    uint16_t lane;
  };
  // Takes ownership of the backlog's frames (freed if never received).
  // Throws std::invalid_argument for a frame on a lane the port lacks.
  BacklogPort(std::unique_ptr<Port> inner, const std::vector<Frame>& backlog);
  ~BacklogPort() override;

  uint16_t rx_burst(uint16_t lane, rte_mbuf** frames, uint16_t max) override;
  // While frames wait, the polling core must not sleep.
  uint64_t held_until_ns() const override { return waiting_ > 0 ? 0 : in_.held_until_ns(); }

  size_t waiting() const { return waiting_; }

 private:
  struct Lane {
    std::vector<rte_mbuf*> frames;  // fixed at construction: rx_burst frees nothing
    size_t next = 0;
  };
  std::vector<Lane> by_lane_;
  size_t waiting_ = 0;
};

}  // namespace lanecast::drivers
