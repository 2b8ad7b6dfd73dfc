// Verbs lanes in a build without the verbs port (no rdma-core): refused,
// saying how to get it.
#include <stdexcept>

#include "engine/group/lane_port.h"

namespace lanecast::engine {

namespace {
[[noreturn]] void not_built() { throw std::invalid_argument(verbs_group_refusal("pmix", false)); }
}  // namespace

bool verbs_port_built() { return false; }
std::string merge_verbs_lanes(std::vector<drivers::PeerAddress>*) { not_built(); }
std::string describe_lane_address(const drivers::PeerAddress& a) { return drivers::format_address(a); }
uint32_t verbs_mtu(const VerbsLane&) { not_built(); }
uint32_t verbs_rx_buffers_held(uint16_t) { not_built(); }
std::unique_ptr<drivers::Port> open_verbs_port(const VerbsLane&, uint16_t, rte_mempool*, uint32_t, std::string*) {
  not_built();
}

}  // namespace lanecast::engine
