#include "drivers/lanes/port_per_lane.h"

#include <algorithm>
#include <stdexcept>

namespace lanecast::drivers {

PortPerLane::PortPerLane(std::vector<std::unique_ptr<Port>> lanes) : lanes_(std::move(lanes)) {
  if (lanes_.empty()) throw std::invalid_argument("port per lane: no ports");
  max_frame_ = lanes_[0]->max_frame_bytes();
  caps_ = lanes_[0]->caps();
  for (size_t k = 0; k < lanes_.size(); ++k) {
    const Port& p = *lanes_[k];
    if (p.lanes() != 1) throw std::invalid_argument("port per lane: " + p.name() + " has more than one lane");
    if (!(p.address() == lanes_[0]->address()))
      throw std::invalid_argument("port per lane: " + p.name() + " is " + format_address(p.address()) + " but " +
                                  lanes_[0]->name() + " is " + format_address(lanes_[0]->address()) +
                                  ": a member's ports must share one address (each on its own switch)");
    max_frame_ = std::min(max_frame_, p.max_frame_bytes());
    const PortCaps c = p.caps();
    caps_.tx_chained = caps_.tx_chained && c.tx_chained;
    caps_.multicast = caps_.multicast && c.multicast;
    caps_.rx_wakeup = caps_.rx_wakeup && c.rx_wakeup;
    name_ += (k ? "+" : "") + p.name();
  }
}

PortStats PortPerLane::stats() const {
  PortStats s;
  for (const auto& p : lanes_) {
    const PortStats t = p->stats();
    s.rx_frames += t.rx_frames;
    s.tx_frames += t.tx_frames;
    s.tx_full += t.tx_full;
    s.rx_missed += t.rx_missed;
    s.rx_errors += t.rx_errors;
    s.tx_errors += t.tx_errors;
    s.rx_no_buffer += t.rx_no_buffer;
  }
  return s;
}

}  // namespace lanecast::drivers
