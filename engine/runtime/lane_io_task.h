// The work of a lane whose port a core of its own drives
// (drivers/lanes/handoff_port.h), as its polling core runs it: receive from
// the NIC into the member's ring, send what the member queued.
#pragma once

#include "drivers/lanes/handoff_port.h"
#include "engine/runtime/poller.h"

namespace lanecast::engine {

class LaneIoTask final : public PollTask {
 public:
  explicit LaneIoTask(drivers::HandoffPort& port) : port_(port) {}
  uint32_t poll_rx(uint64_t) override { return port_.lane_rx(); }
  uint32_t poll_tx(uint64_t) override { return port_.lane_tx(); }
  uint64_t next_wakeup_ns() const override { return port_.lane_next_due_ns(); }
  bool arm_wakeup() override { return port_.lane_arm(); }
  void disarm_wakeup() override { port_.lane_disarm(); }

 private:
  drivers::HandoffPort& port_;
};

}  // namespace lanecast::engine
