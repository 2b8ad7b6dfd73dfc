#include "engine/group/group_setup.h"

#include <rte_errno.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <bit>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "drivers/dpdk/dpdk_port.h"
#include "drivers/ethernet.h"
#include "engine/auth/epoch_keys.h"
#include "engine/bootstrap/endpoints.h"
#include "lanecast/lanecast.h"
#include "engine/node/node.h"
#include "lanecast/lanecast.h"
#include "engine/runtime/packed_pool.h"
#include "engine/group/lane_port.h"
#include "engine/wire/wire.h"

namespace lanecast::engine {
namespace {

// Room for the longest link header a port may write (Ethernet: 14).
constexpr uint32_t kMaxLinkHeader = 64;
// The largest segment chosen from a port's MTU: 8 KiB, as jumbo frames allow.
constexpr uint32_t kMaxAutoSegment = 8192;
constexpr uint32_t kFabricSegment = 1400;

}  // namespace

PoolPtr make_pool(const std::string& name, uint32_t count, uint32_t data_room, bool lcore_caches) {
  // Cache per lcore: most allocations and frees stay core-local.
  const uint32_t cache = lcore_caches ? std::min<uint32_t>(256, count / 8) : 0;
  // Packed where nothing DMAs (engine/runtime/packed_pool.h); DPDK's own layout
  // otherwise, or if DPDK refuses the packed one for another reason than
  // memory (which its own layout needs more of).
  rte_mempool* p = packed_pools_apply() ? make_packed_pktmbuf_pool(name, count, cache, static_cast<uint16_t>(data_room))
                                        : nullptr;
  if (p == nullptr && !(packed_pools_apply() && rte_errno == ENOMEM))
    p = rte_pktmbuf_pool_create(name.c_str(), count, cache, 0, static_cast<uint16_t>(data_room), SOCKET_ID_ANY);
  if (p == nullptr)
    throw std::runtime_error("cannot create mempool " + name + " of " + std::to_string(count) +
                             " buffers: " + rte_strerror(rte_errno) + " (raise the engine's memory_mb)");
  return PoolPtr(p);
}

// A process that starts again on the same links (a bench run after another)
// must not take the last one's late frames for its own.
uint32_t fresh_epoch() {
  const uint64_t x = bootstrap::fresh_incarnation();  // random per process start
  const auto e = static_cast<uint32_t>(x ^ (x >> 32));
  return e != 0 ? e : 1;
}

uint32_t data_headers(bool sealed) {
  return wire::kDataHeaderBytes + (sealed ? wire::seal_bytes(wire::FrameType::Data) : 0);
}

uint32_t segment_for(uint32_t segment_bytes, const std::vector<std::string>& ports, bool sealed) {
  if (segment_bytes != 0) return segment_bytes;
  if (ports.empty()) return kFabricSegment;
  const uint32_t headers = data_headers(sealed);
  uint32_t seg = kMaxAutoSegment;
  for (const std::string& p : ports) {
    if (const std::optional<VerbsLane> v = parse_verbs_lane(p)) {
      // A UD datagram carries lanecast's headers and a segment; the GRH and
      // transport headers are outside the MTU.
      uint32_t mtu = 0;
      try {
        mtu = verbs_mtu(*v);
      } catch (const std::exception& e) {  // the host's adapter, not the file: refused by name, as other ports
        throw std::invalid_argument("group: port '" + p + "': " + e.what());
      }
      if (mtu <= headers)
        throw std::invalid_argument("group: port '" + p + "' has an MTU of " + std::to_string(mtu) +
                                    ", too small for lanecast's headers");
      seg = std::min(seg, mtu - headers);
      continue;
    }
    const uint32_t mtu = drivers::DpdkPort::interface_mtu(p);
    if (mtu == 0) return kFabricSegment - (headers - wire::kDataHeaderBytes);  // a PMD that does not say: Ethernet's
    if (mtu <= headers)
      throw std::invalid_argument("group: port '" + p + "' has an MTU of " + std::to_string(mtu) +
                                  ", too small for lanecast's headers");
    seg = std::min(seg, mtu - headers);
    // A PMD whose receive ring frames are shorter than the MTU allows (an
    // af_packet port without a framesz for jumbo frames) would truncate every
    // full segment: the segment fits its ring frame instead.
    const uint32_t ring = drivers::DpdkPort::rx_frame_limit(p);
    if (ring != 0) {
      if (ring <= drivers::ethernet::kHeaderBytes + headers)
        throw std::invalid_argument("group: port '" + p + "' receives frames of at most " + std::to_string(ring) +
                                    " bytes, too small for lanecast's headers");
      seg = std::min(seg, ring - drivers::ethernet::kHeaderBytes - headers);
    }
  }
  return seg;
}

algos::autoselect::Rules load_rules(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("auto rules: cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  return algos::autoselect::Rules::parse(text.str(), path);  // RulesError is an invalid_argument
}

StreamOptions resolve_streams(StreamOptions o, const std::string& algo, uint32_t nodes) {
  if (o.fanout == 0) {
    // The stream's tree after the group's algorithm: a pipeline's chain, a
    // linear root's star, else the binary tree (algos/topology/stream_tree.h).
    if (algo == "chain" || algo == "pipeline" || algo == "mcast_chain") o.fanout = 1;
    else if (algo == "linear") o.fanout = std::max<uint32_t>(1, nodes - 1);
    else o.fanout = 2;
  }
  if (o.window_batches == 0 || o.window_batches > 65536)
    throw std::invalid_argument("streams: window_batches must be 1..65536, not " + std::to_string(o.window_batches));
  o.window_batches = std::max<uint32_t>(16, std::bit_ceil(o.window_batches));
  if (o.window_messages == 0) throw std::invalid_argument("streams: window_messages must be positive");
  if (o.window_bytes < 4096 || o.window_bytes > (uint64_t{1} << 34))
    throw std::invalid_argument("streams: window_bytes must be 4 KiB..16 GiB");
  if (o.delivery_bytes < 4096 || o.delivery_bytes > (uint64_t{1} << 34))
    throw std::invalid_argument("streams: delivery_bytes must be 4 KiB..16 GiB");
  if (o.streams_per_member < 1 || o.streams_per_member > kMaxStreamsPerMember)
    throw std::invalid_argument("streams: streams_per_member must be 1.." + std::to_string(kMaxStreamsPerMember) +
                                ", not " + std::to_string(o.streams_per_member));
  if (!(o.report_us >= 0 && o.report_us <= 1e6)) throw std::invalid_argument("streams: report_us must be 0..1e6");
  if (!(o.evict_after_ms >= 0 && o.evict_after_ms <= kMaxTimeoutMs))
    throw std::invalid_argument("streams: evict_after_ms must be 0 (never) .. " + std::to_string(kMaxTimeoutMs) + " ms");
  return o;
}

PoolPlan plan_pools(uint64_t max_message_bytes, uint32_t segment, uint32_t nodes, uint32_t members_here,
                    const std::vector<std::string>& ports, const StreamOptions& streams, bool sealed) {
  PoolPlan pp{};
  const uint64_t max_segments = (max_message_bytes + segment - 1) / segment;
  // Payload buffers. On the fabric only a root allocates them, one per segment
  // it sends (receivers share the root's by reference); two messages' worth
  // lets the next root start while the last one drains. On NIC-like ports
  // every member receives into buffers of its own and keeps a message's
  // worth until the broadcast ends, plus what its ports keep posted.
  uint64_t posted = 0;
  for (const std::string& p : ports)
    posted += parse_verbs_lane(p) ? verbs_rx_buffers_held(1) : drivers::DpdkPort::rx_buffers_held(p);
  // Streams: each keeps its window of batches. On NIC-like ports every
  // member holds its own copy of every stream's window, and any member may
  // publish (streams_per_member each). On the fabric the members share the
  // publishers' buffers; pooled for 16 publishing streams at full windows -
  // beyond, publishers share them (a publisher that finds none waits:
  // tx_alloc_failures) - so a large group in one process does not pool
  // members x window buffers for streams it may never run.
  const uint64_t streams_total = uint64_t{nodes} * streams.streams_per_member;
  const uint64_t stream_batches = (ports.empty() ? std::min<uint64_t>(streams_total, 16) : streams_total) *
                                  streams.window_batches;
  const uint64_t payload_count = ports.empty() ? 2 * max_segments + 1024 + stream_batches
                                               : (uint64_t{members_here} + 1) * max_segments + posted + 1024 +
                                                     uint64_t{members_here} * stream_batches;
  if (payload_count > (1u << 24))
    throw std::invalid_argument("group: message limit and stream windows need too many buffers (" +
                                std::to_string(payload_count) + "; at most " + std::to_string(1u << 24) +
                                "): lower max_message, stream_window or streams_per_member");
  pp.payload_count = static_cast<uint32_t>(payload_count);
  // Payload buffers also receive whole frames on NIC-like ports (af_packet),
  // and PMDs that copy into mbufs want at least DPDK's default room.
  pp.max_frame = drivers::ethernet::kHeaderBytes + data_headers(sealed) + segment;
  pp.payload_room = RTE_PKTMBUF_HEADROOM + kMaxLinkHeader + pp.max_frame;
  if (!ports.empty()) pp.payload_room = std::max<uint32_t>(pp.payload_room, RTE_MBUF_DEFAULT_BUF_SIZE);
  for (const std::string& p : ports)
    pp.payload_room = std::max(pp.payload_room, RTE_PKTMBUF_HEADROOM + drivers::DpdkPort::rx_buffer_bytes(p));
  // Header buffers: a frame's header lives from its send until the receiver
  // took it (rings, the switch's queues); acks too; and the fabric's
  // multicast copies are header buffers (Fabric::replicate). Running out is not
  // fatal (tx_alloc_failures: retried next iteration). A NIC-like port
  // gives a header back once the frame left (af_packet copies it out at
  // once), so a process's member needs far fewer than the fabric, whose rings
  // and switch hold every frame in flight.
  const uint64_t spare = ports.empty() ? 16384 : 4096;
  pp.header_count = static_cast<uint32_t>(
      std::min<uint64_t>(uint64_t{members_here} * 512 + uint64_t{nodes - members_here} * 64 + spare, 1u << 22));
  // A frame's headers (the seals too, with a key) after a link header.
  pp.header_room = RTE_PKTMBUF_HEADROOM + (sealed ? 192 : 128);
  return pp;
}

PortCounters port_counters_of(const drivers::PortStats& s) {
  const auto faults = [](const drivers::FaultStats& f) {
    return FaultCounters{f.lost,          f.burst_lost,       f.reordered, f.duplicated,
                         f.corrupted_header, f.corrupted_payload, f.delayed,  f.no_buffer};
  };
  return PortCounters{s.rx_frames, s.tx_frames,    s.tx_full,          s.rx_missed,           s.rx_errors,
                      s.tx_errors, s.rx_no_buffer, s.rx_lost_emulated, faults(s.rx_faults), faults(s.tx_faults)};
}

GroupCaps group_caps_of(const Node& n, uint32_t segment_bytes) {
  const drivers::PortCaps& c = n.port_caps();
  GroupCaps g{c.multicast, c.tx_chained, c.rx_wakeup, segment_bytes, n.multicast_fallback(), "", false, ""};
  if (!n.group_addresses().empty()) g.group_address = drivers::format_address(n.group_addresses()[0]);
  g.stream_fanout = n.config().streams.fanout;
  if (n.config().auth) {
    g.sealed = true;
    g.key_fingerprint = n.config().auth->fingerprint;
  }
  return g;
}

uint64_t pool_bytes(const PoolPlan& pp) {
  // Each buffer also carries its rte_mbuf and the mempool's object header.
  constexpr uint64_t kPerBuffer = sizeof(rte_mbuf) + 64;
  return uint64_t{pp.payload_count} * (pp.payload_room + kPerBuffer) +
         uint64_t{pp.header_count} * (pp.header_room + kPerBuffer);
}

}  // namespace lanecast::engine
