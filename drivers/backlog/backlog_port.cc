#include "drivers/backlog/backlog_port.h"

#include <rte_mbuf.h>

#include <stdexcept>
#include <string>

namespace lanecast::drivers {

BacklogPort::BacklogPort(std::unique_ptr<Port> inner, const std::vector<Frame>& backlog)
    : ForwardingPort(std::move(inner)), by_lane_(in_.lanes()) {
  for (const Frame& f : backlog) {
    if (f.lane >= by_lane_.size()) {
      for (const Frame& g : backlog) rte_pktmbuf_free(g.frame);  // the destructor will not run
      throw std::invalid_argument("a backlog frame on lane " + std::to_string(f.lane) + " of a port with " +
                                  std::to_string(in_.lanes()) + " lanes");
    }
  }
  for (const Frame& f : backlog) by_lane_[f.lane].frames.push_back(f.frame);
  waiting_ = backlog.size();
}

BacklogPort::~BacklogPort() {
  for (Lane& l : by_lane_)
    for (size_t i = l.next; i < l.frames.size(); ++i) rte_pktmbuf_free(l.frames[i]);
}

// The backlog first, then - in the same burst, if there is room - what the
// port beneath has now: the early frames keep their place ahead of later
// ones, and a burst is never shorter than it would have been without them.
uint16_t BacklogPort::rx_burst(uint16_t lane, rte_mbuf** frames, uint16_t max) {
  uint16_t n = 0;
  if (waiting_ > 0 && lane < by_lane_.size()) {
    Lane& l = by_lane_[lane];
    while (n < max && l.next < l.frames.size()) frames[n++] = l.frames[l.next++];
    waiting_ -= n;
  }
  if (n < max) n += in_.rx_burst(lane, frames + n, static_cast<uint16_t>(max - n));
  return n;
}

}  // namespace lanecast::drivers
