// With DPDK as shared libraries the PMD's setsockopt is not wrapped
// (af_packet_fanout.cc): it keeps DPDK's own fanout ids, and two ports of
// this process on one interface share a group (docs/groups.md). Its sockets
// are not seen either, so they get no kernel receive filter.
#include "drivers/dpdk/af_packet_fanout.h"

namespace lanecast::drivers::af_packet {

void new_port() {}
std::vector<int> port_sockets() { return {}; }

}  // namespace lanecast::drivers::af_packet
