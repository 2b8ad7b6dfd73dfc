// Lanes before a group: whether this process can open one (Engine::try_lane),
// and af_packet devargs for a kernel interface (af_packet_lane).
#include <algorithm>
#include <atomic>
#include <stdexcept>

#include "drivers/dpdk/af_packet_ring.h"
#include "drivers/dpdk/dpdk_port.h"
#include "engine/group/group_setup.h"
#include "engine/group/lane_port.h"
#include "lanecast/lanecast.h"

namespace lanecast {

std::string Engine::try_lane(const std::string& lane) {
  // A pool of its own, as small as a port accepts: the port receives into
  // it while it is open (a few frames at most), and both go before return.
  static std::atomic<uint32_t> probes{0};
  constexpr uint32_t kBuffers = 512;
  try {
    std::optional<engine::VerbsLane> verbs = engine::parse_verbs_lane(lane);
    engine::PoolPtr pool = engine::make_pool("try" + std::to_string(probes++), kBuffers, 2048 + 128, false);
    if (verbs) {
      engine::open_verbs_port(*verbs, 1, pool.get(), 1500);
    } else {
      drivers::DpdkPortOptions po;
      po.rx_pool = pool.get();
      po.rx_wakeup = false;
      drivers::DpdkPort::open(lane, po);
    }
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}

std::string af_packet_lane(const std::string& iface, uint32_t index, bool bypass_qdisc) {
  const bool named = !iface.empty() && iface.size() <= 15 && std::all_of(iface.begin(), iface.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
           c == '-' || c == '@';
  });
  if (!named)
    throw std::invalid_argument("interface '" + iface +
                                "': not an interface name (1..15 letters, digits or _.-@)");
  const std::string devargs = "net_af_packet" + std::to_string(index) + ",iface=" + iface;
  const uint32_t mtu = drivers::DpdkPort::interface_mtu(devargs);
  return devargs + ",qdisc_bypass=" + (bypass_qdisc ? "1" : "0") + drivers::af_packet::ring_devargs(mtu);
}

}  // namespace lanecast
