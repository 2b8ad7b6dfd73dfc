// With DPDK as shared libraries the PMD's setsockopt is not wrapped
// (af_packet_fanout.cc): it keeps DPDK's own fanout ids, and two ports of
// this process on one interface share a group (docs/groups.md).
#include "drivers/dpdk/af_packet_fanout.h"

namespace lanecast::drivers::af_packet {

void new_port() {}

}  // namespace lanecast::drivers::af_packet
