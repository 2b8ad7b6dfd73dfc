// Verbs lanes opened: a VerbsPort through rdma-core (built with the verbs port).
#include <stdexcept>

#include "drivers/verbs/verbs_port.h"
#include "engine/group/lane_port.h"

namespace lanecast::engine {

bool verbs_port_built() { return true; }

std::string describe_lane_address(const drivers::PeerAddress& a) {
  const std::optional<drivers::verbs::Endpoint> e = drivers::verbs::to_endpoint(a);
  return e ? drivers::verbs::describe(*e) : drivers::format_address(a);
}

uint32_t verbs_mtu(const VerbsLane& lane) {
  return drivers::verbs::VerbsPort::active_mtu(lane.device, lane.port_num);
}

uint32_t verbs_rx_buffers_held(uint16_t lanes) { return uint32_t{lanes} * drivers::verbs::VerbsPort::Options{}.rq_depth; }

std::unique_ptr<drivers::Port> open_verbs_port(const VerbsLane& lane, uint16_t lanes, rte_mempool* rx_pool,
                                               uint32_t max_datagram, std::string* capabilities) {
  drivers::verbs::VerbsPort::Options o;
  o.device = lane.device;
  o.port_num = lane.port_num;
  o.lanes = lanes;
  o.rx_pool = rx_pool;
  o.max_datagram = max_datagram;
  auto port = std::make_unique<drivers::verbs::VerbsPort>(o);
  if (capabilities != nullptr) *capabilities = drivers::verbs::describe(port->capabilities());
  return port;
}

}  // namespace lanecast::engine
