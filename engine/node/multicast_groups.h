// The group addresses a node joined on its port, one per lane, when it
// multicasts: a broadcast's multicasts and the streams' batches to the group
// go there. Joined when the node is made and left when it goes; on any
// refusal none is kept and multicasts are emulated (one datagram per
// member), and fallback() says why. Control path only.
#pragma once

#include <string>
#include <vector>

#include "drivers/port.h"
#include "engine/node/node_config.h"

namespace lanecast::engine {

class MulticastGroups {
 public:
  explicit MulticastGroups(drivers::Port& port) : port_(port) {}

  // Joins each lane's group address when `cfg` asks for multicast and the
  // port `can` multicast; whether multicasts now go to them.
  bool join(const NodeConfig& cfg, bool can);
  void leave();
  // Per lane (empty when multicasts are emulated).
  const std::vector<drivers::PeerAddress>& addresses() const { return addrs_; }
  // Why multicasts are emulated although multicast was asked for; "" when
  // they are not.
  const std::string& fallback() const { return fallback_; }

 private:
  drivers::Port& port_;
  std::vector<drivers::PeerAddress> addrs_;
  std::string fallback_;
};

}  // namespace lanecast::engine
