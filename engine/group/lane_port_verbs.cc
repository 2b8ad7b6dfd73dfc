// Verbs lanes opened: a VerbsPort through rdma-core (built with the verbs port).
#include <cstring>
#include <stdexcept>

#include "drivers/verbs/verbs_port.h"
#include "engine/group/lane_port.h"

namespace lanecast::engine {

bool verbs_port_built() { return true; }

std::string merge_verbs_lanes(std::vector<drivers::PeerAddress>* lanes) {
  using drivers::verbs::Endpoint;
  using drivers::verbs::to_endpoint;
  if (lanes->empty()) return "";
  bool same = true;
  for (const drivers::PeerAddress& a : *lanes) same = same && a == lanes->front();
  if (same) return "";  // already one address (this member's own, or from pmix)
  Endpoint merged;
  for (size_t l = 0; l < lanes->size(); ++l) {
    const std::optional<Endpoint> e = to_endpoint((*lanes)[l]);
    if (!e || e->lanes != 1) return "lane " + std::to_string(l) + " answered from " + format_address((*lanes)[l]);
    if (l == 0) merged = *e;
    else if (std::memcmp(e->gid.raw, merged.gid.raw, 16) != 0 || e->lid != merged.lid || e->qkey != merged.qkey)
      return "lanes 0 and " + std::to_string(l) + " answered from two adapter ports (" +
             drivers::verbs::describe(merged) + "; " + drivers::verbs::describe(*e) + ")";
    merged.qpn[l] = e->qpn[0];
  }
  merged.lanes = static_cast<uint8_t>(lanes->size());
  lanes->assign(lanes->size(), drivers::verbs::to_address(merged));
  return "";
}

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
