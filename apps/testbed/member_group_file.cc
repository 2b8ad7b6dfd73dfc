#include "apps/testbed/member_group_file.h"

#include <algorithm>
#include <sstream>

#include "drivers/dpdk/af_packet_ring.h"

namespace lanecast::apps::testbed {

std::string af_packet_ring_devargs(uint32_t mtu) { return drivers::af_packet::ring_devargs(mtu); }

std::string lane_devargs(uint32_t lane, uint32_t mtu, bool xdp) {
  const std::string iface = node_iface(lane);
  if (xdp) return "net_af_xdp" + std::to_string(lane) + ",iface=" + iface + ",start_queue=0,queue_count=1";
  return "net_af_packet" + std::to_string(lane) + ",iface=" + iface + ",qdisc_bypass=0" + af_packet_ring_devargs(mtu);
}

// Discovery, not the static bootstrap: static starts each member at once, so
// a member whose start-up (EAL, pools) takes longer than the peer timeout -
// many processes on a few CPUs - would fail the first broadcast; discovery
// waits until every member has said it heard everyone. The addresses are
// the testbed's all the same (node_mac).
std::string member_group_toml(const TestbedSpec& t, const MemberGroup& g) {
  std::ostringstream f;
  f << "# lanecast bench --testbed: testbed " << t.name << ", " << t.nodes << " nodes, " << t.lanes
    << " lane(s), tbf " << t.rate_mbit << " Mbit/s, MTU " << t.mtu << "\n";
  f << "[group]\n"
    << "name = \"" << g.name << "\"\n"
    << "id = " << g.id << "\n"
    << "bootstrap = \"discovery\"\n"
    << "bootstrap_timeout_ms = 30000\n"
    << "lanes = " << t.lanes << "\n"
    << "max_message = " << std::max<uint64_t>(g.max_message, 1) << "\n"
    << "peer_timeout_ms = " << g.peer_timeout_ms << "\n"
    << "port_rate_mbit = " << g.port_rate_mbit << "\n"
    << "port_overhead = " << g.port_overhead << "\n";
  f << "rate_control = " << (g.rate_control ? "true" : "false") << "\n";  // told the rate, or not paced: not found
  if (g.window != 0) f << "window = " << g.window << "\n";
  if (g.segment != 0) f << "segment = " << g.segment << "\n";
  f << "multicast = " << (g.mcast.enabled ? "true" : "false") << "\n";
  if (g.mcast.root_delay_us != 0) f << "mcast_root_delay_us = " << g.mcast.root_delay_us << "\n";
  if (g.mcast.sync_seed != 0) f << "mcast_sync_seed = " << g.mcast.sync_seed << "\n";
  f << "mcast_repair = \"" << (g.mcast.repair_on_request ? "request" : "ring") << "\"\n";
  if (g.mcast.loss != 0) f << "mcast_loss = " << g.mcast.loss << "\nmcast_loss_seed = " << g.mcast.loss_seed << "\n";
  if (g.stream_fanout != 0) f << "stream_fanout = " << g.stream_fanout << "\n";
  if (g.stream_window != 0) f << "stream_window = " << g.stream_window << "\n";
  if (g.stream_window_bytes != 0) f << "stream_window_bytes = " << g.stream_window_bytes << "\n";
  if (g.stream_multicast) f << "stream_multicast = true\n";
  if (!g.key_file.empty()) f << "key_file = \"" << g.key_file << "\"\n";
  for (uint32_t r = 0; r < t.nodes; ++r) {
    f << "\n[[member]]\nrank = " << r << "\nlanes = [";
    for (uint32_t lane = 0; lane < t.lanes; ++lane)
      f << (lane ? ", " : "") << '"' << lane_devargs(lane, t.mtu, g.xdp) << '"';
    f << "]\n";
  }
  return f.str();
}

}  // namespace lanecast::apps::testbed
