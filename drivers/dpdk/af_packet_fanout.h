// The af_packet PMD's fanout groups, made unique per port
// (af_packet_fanout.cc says why and how).
#pragma once

#include <vector>

namespace lanecast::drivers::af_packet {

// Before a port's probe: the sockets opened from now on belong to a new
// port, which gets fanout groups of its own. With DPDK linked as shared
// libraries the wrapper is not linked and this does nothing (docs/groups.md).
void new_port();

// The packet sockets of the port opened since new_port() (one per queue
// pair), as the PMD made them: its receive filter goes on them
// (kernel_rx_filter.h). Empty with DPDK linked as shared libraries.
std::vector<int> port_sockets();

}  // namespace lanecast::drivers::af_packet
