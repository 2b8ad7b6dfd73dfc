// The bench header's account of multicast: real (the group address), or
// emulated and why, and the mcast_chain options and loss in force. Shared by
// the in-process bench and the one-member-per-process bench (and so the
// testbed's, which streams rank 0's).
#pragma once

#include <cstdio>
#include <string>

#include "apps/testbed/member_group_file.h"
#include "lanecast/lanecast.h"

namespace lanecast::apps {

inline std::string multicast_text(const GroupCaps& caps, const testbed::MulticastSettings& m) {
  std::string s;
  if (caps.multicast) {
    s = "by the switch, one frame per multicast to group " + caps.group_address + " (lane 0)";
  } else if (!m.enabled) {
    s = "emulated, one datagram per member (--multicast off)";
  } else {
    s = "EMULATED, one datagram per member: " + caps.multicast_fallback;
  }
  s += m.repair_on_request ? "; mcast_chain repairs on request" : "; mcast_chain repairs by the paper's ring";
  char buf[160];
  if (m.root_delay_us > 0) {
    std::snprintf(buf, sizeof buf, "; root delay %g us", m.root_delay_us);
    s += buf;
  }
  if (m.sync_seed != 0) {
    std::snprintf(buf, sizeof buf, "; randomized synchronisation (seed %llu)",
                  static_cast<unsigned long long>(m.sync_seed));
    s += buf;
  }
  if (m.loss > 0) {
    std::snprintf(buf, sizeof buf, "; each receiver drops %g%% of multicast frames (seed %llu + rank)", m.loss * 100,
                  static_cast<unsigned long long>(m.loss_seed));
    s += buf;
  }
  return s;
}

}  // namespace lanecast::apps
