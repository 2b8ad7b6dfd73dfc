// MulticastGroups: the lanes' group addresses joined, all or none.
#include "engine/node/multicast_groups.h"

namespace lanecast::engine {

bool MulticastGroups::join(const NodeConfig& cfg, bool can) {
  if (!cfg.multicast) return false;
  if (!can) {
    fallback_ = port_.name() + " cannot multicast";
    return false;
  }
  for (uint16_t l = 0; l < cfg.lanes; ++l) {
    const drivers::PeerAddress a = port_.group_address(cfg.address_seed, l);
    const std::string why = a.len == 0 ? port_.name() + " has no group address" : port_.join_group(l, a);
    if (!why.empty()) {
      leave();
      fallback_ = why;
      return false;
    }
    addrs_.push_back(a);
  }
  return true;
}

void MulticastGroups::leave() {
  for (uint16_t l = 0; l < addrs_.size(); ++l) port_.leave_group(l, addrs_[l]);
  addrs_.clear();
}

}  // namespace lanecast::engine
