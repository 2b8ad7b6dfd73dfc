// The af_packet PMD's fanout groups, made unique per port
// (af_packet_fanout.cc says why and how).
#pragma once

namespace lanecast::drivers::af_packet {

// Before a port's probe: the sockets opened from now on belong to a new
// port, which gets fanout groups of its own. With DPDK linked as shared
// libraries the wrapper is not linked and this does nothing (docs/groups.md).
void new_port();

}  // namespace lanecast::drivers::af_packet
