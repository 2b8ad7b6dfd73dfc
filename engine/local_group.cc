// LocalGroup: p members in one process, on the in-process fabric or on one
// DPDK port each.
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <time.h>
#include <unistd.h>

#include "algos/sim/topology.h"
#include "drivers/dpdk/dpdk_port.h"
#include "drivers/ethernet.h"
#include "drivers/fabric/fabric.h"
#include "engine/lanecast.h"
#include "engine/node.h"
#include "engine/poller.h"
#include "engine/wire.h"

namespace lanecast {
namespace {

// The switch as a polling task. Members' transmits wake its core
// (Fabric::set_waker); its timers are next_event_ns().
class FabricTask final : public engine::PollTask {
 public:
  explicit FabricTask(drivers::Fabric& f) : f_(f) {}
  uint32_t poll_rx(uint64_t now) override { return f_.poll(now); }
  uint64_t next_wakeup_ns() const override { return f_.next_event_ns(); }
  bool arm_wakeup() override { return true; }

 private:
  drivers::Fabric& f_;
};

struct PoolDeleter {
  void operator()(rte_mempool* p) const { rte_mempool_free(p); }
};
using PoolPtr = std::unique_ptr<rte_mempool, PoolDeleter>;

PoolPtr make_pool(const std::string& name, uint32_t count, uint32_t data_room) {
  // Cache per lcore: most allocations and frees stay core-local.
  const uint32_t cache = std::min<uint32_t>(256, count / 8);
  rte_mempool* p = rte_pktmbuf_pool_create(name.c_str(), count, cache, 0, static_cast<uint16_t>(data_room),
                                           SOCKET_ID_ANY);
  if (p == nullptr)
    throw std::runtime_error("cannot create mempool " + name + " of " + std::to_string(count) +
                             " buffers: " + rte_strerror(rte_errno) + " (raise the engine's memory_mb)");
  return PoolPtr(p);
}

// An epoch no earlier incarnation of this group is likely to have had: a
// process that starts again on the same links (a bench run after another)
// must not take the last one's late frames for its own.
uint32_t fresh_epoch() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  uint64_t x = uint64_t(ts.tv_sec) * 1'000'000'000 + uint64_t(ts.tv_nsec) + (uint64_t(getpid()) << 40);
  x ^= x >> 33;  // a 64-bit mix (splitmix64's finalizer) spreads nearby times apart
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  const auto e = static_cast<uint32_t>(x);
  return e != 0 ? e : 1;
}

// Room for the longest link header a port may write (Ethernet: 14).
constexpr uint32_t kMaxLinkHeader = 64;
// The largest segment chosen from a port's MTU: 8 KiB, as jumbo frames allow.
constexpr uint32_t kMaxAutoSegment = 8192;
constexpr uint32_t kFabricSegment = 1400;

void validate(const GroupOptions& o) {
  if (!o.ports.empty() && o.ports.size() != o.nodes)
    throw std::invalid_argument("group: " + std::to_string(o.ports.size()) + " ports given for " +
                                std::to_string(o.nodes) + " nodes");
  if (o.nodes == 0) throw std::invalid_argument("group: --nodes must be at least 1");
  if (o.lanes == 0 || o.lanes > 4) throw std::invalid_argument("group: lanes must be 1..4");
  if (o.nodes > 1024) throw std::invalid_argument("group: at most 1024 nodes in one process");
  if (!o.ports.empty() && o.ports.size() > 32)
    throw std::invalid_argument("group: at most 32 DPDK ports per process (Debian's DPDK); use the fabric");
  if (o.segment_bytes > 9000) throw std::invalid_argument("group: segment size must be 1..9000 bytes (0: from the MTU)");
  if (o.max_message_bytes > (uint64_t{1} << 32)) throw std::invalid_argument("group: messages of at most 4 GiB");
  if (o.algo != "auto" && !algos::algo_by_name(o.algo))
    throw std::invalid_argument("group: unknown algorithm '" + o.algo + "'");
  if (!(o.fabric.loss >= 0 && o.fabric.loss < 1)) throw std::invalid_argument("group: loss must be in [0, 1)");
  if (!(o.fabric.rate_mbit >= 0) || !(o.fabric.latency_us >= 0))
    throw std::invalid_argument("group: rate and latency must not be negative");
  if (!(o.port_rate_mbit >= 0) || !std::isfinite(o.port_rate_mbit))
    throw std::invalid_argument("group: port rate must be a finite number of Mbit/s >= 0");
  if (o.port_overhead_bytes > 1024) throw std::invalid_argument("group: port overhead must be 0..1024 bytes per frame");
  if (!(o.peer_timeout_ms > 0)) throw std::invalid_argument("group: peer timeout must be positive");
  const bool mcast_options = o.mcast_root_delay_us != 0 || o.mcast_sync_seed != 0;
  if (mcast_options && o.algo != "mcast_chain" && o.algo != "auto")
    throw std::invalid_argument("group: mcast_root_delay_us and mcast_sync_seed apply to algorithm mcast_chain "
                                "(or auto), not to '" + o.algo + "'");
  if (!(o.mcast_root_delay_us >= 0) || !(o.mcast_root_delay_us * 1e-3 < o.peer_timeout_ms))
    throw std::invalid_argument("group: mcast_root_delay_us must be at least 0 and below the peer timeout (" +
                                std::to_string(o.peer_timeout_ms) + " ms)");
  if (o.window == 0 || o.window > engine::reliable::SendChannel::kMaxWindow)
    throw std::invalid_argument("group: window must be 1.." + std::to_string(engine::reliable::SendChannel::kMaxWindow));
}

// The segment a group uses: as given, or from its links (see GroupOptions).
uint32_t segment_of(const GroupOptions& o) {
  if (o.segment_bytes != 0) return o.segment_bytes;
  if (o.ports.empty()) return kFabricSegment;
  uint32_t seg = kMaxAutoSegment;
  for (const std::string& p : o.ports) {
    const uint32_t mtu = drivers::DpdkPort::interface_mtu(p);
    if (mtu == 0) return kFabricSegment;  // a PMD that does not say: Ethernet's
    if (mtu <= engine::wire::kDataHeaderBytes)
      throw std::invalid_argument("group: port '" + p + "' has an MTU of " + std::to_string(mtu) +
                                  ", too small for lanecast's headers");
    seg = std::min(seg, mtu - engine::wire::kDataHeaderBytes);
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

// What a group's mempools hold, from its options alone.
struct PoolPlan {
  uint32_t payload_count, payload_room;
  uint32_t header_count, header_room;
  uint32_t max_frame;  // link header included
};

PoolPlan plan_pools(const GroupOptions& o, uint32_t segment) {
  PoolPlan pp{};
  const uint64_t max_segments = (o.max_message_bytes + segment - 1) / segment;
  // Payload buffers. On the fabric only a root allocates them, one per segment
  // it sends (receivers share the root's by reference); two messages' worth
  // lets the next root start while the last one drains. On NIC-like ports
  // every member receives into buffers of its own and keeps a message's
  // worth until the broadcast ends, plus what its rx queue holds.
  const uint64_t payload_count = o.ports.empty() ? 2 * max_segments + 1024
                                                 : (uint64_t{o.nodes} + 1) * max_segments + uint64_t{o.nodes} * 2048 + 1024;
  if (payload_count > (1u << 24)) throw std::invalid_argument("group: message limit needs too many buffers");
  pp.payload_count = static_cast<uint32_t>(payload_count);
  // Payload buffers also receive whole frames on NIC-like ports (af_packet),
  // and PMDs that copy into mbufs want at least DPDK's default room.
  pp.max_frame = drivers::ethernet::kHeaderBytes + engine::wire::kDataHeaderBytes + segment;
  pp.payload_room = RTE_PKTMBUF_HEADROOM + kMaxLinkHeader + pp.max_frame;
  if (!o.ports.empty()) pp.payload_room = std::max<uint32_t>(pp.payload_room, RTE_MBUF_DEFAULT_BUF_SIZE);
  for (const std::string& p : o.ports)
    pp.payload_room = std::max(pp.payload_room, RTE_PKTMBUF_HEADROOM + drivers::DpdkPort::rx_buffer_bytes(p));
  // Header buffers: a frame's header lives from its send until the receiver
  // took it (rings, the switch's queues); acks too; and the fabric's
  // multicast copies are header-sized indirect buffers. Running out is not
  // fatal (tx_alloc_failures: retried next iteration).
  pp.header_count = static_cast<uint32_t>(std::min<uint64_t>(uint64_t{o.nodes} * 512 + 16384, 1u << 22));
  pp.header_room = RTE_PKTMBUF_HEADROOM + 128;
  return pp;
}

uint64_t pool_bytes(const PoolPlan& pp) {
  // Each buffer also carries its rte_mbuf and the mempool's object header.
  constexpr uint64_t kPerBuffer = sizeof(rte_mbuf) + 64;
  return uint64_t{pp.payload_count} * (pp.payload_room + kPerBuffer) +
         uint64_t{pp.header_count} * (pp.header_room + kPerBuffer);
}

}  // namespace

uint64_t LocalGroup::memory_bytes(const GroupOptions& o) {
  validate(o);
  return pool_bytes(plan_pools(o, segment_of(o)));
}

struct LocalGroup::Impl {
  PoolPtr payload_pool;
  PoolPtr header_pool;
  uint32_t segment = 0;
  uint64_t pool_bytes = 0;
  std::unique_ptr<drivers::Fabric> fabric;                    // the in-process fabric, or
  std::vector<std::unique_ptr<drivers::DpdkPort>> own_ports;  // one port per member
  std::unique_ptr<FabricTask> fabric_task;
  std::vector<std::unique_ptr<engine::Node>> nodes;
  std::vector<std::pair<engine::Poller*, engine::PollTask*>> placement;
  std::optional<algos::autoselect::Rules> rules;  // from GroupOptions::auto_rules_file
};

std::unique_ptr<LocalGroup> Engine::create_local_group(const GroupOptions& o) {
  validate(o);
  const uint32_t gid = next_group_id_++;
  auto g = std::unique_ptr<LocalGroup>(new LocalGroup());
  g->opts_ = o;
  g->engine_ = this;
  g->impl_ = std::make_unique<LocalGroup::Impl>();
  auto& im = *g->impl_;

  im.segment = segment_of(o);
  g->opts_.segment_bytes = im.segment;
  const PoolPlan pp = plan_pools(o, im.segment);
  im.pool_bytes = pool_bytes(pp);
  const std::string tag = "g" + std::to_string(gid);
  im.payload_pool = make_pool(tag + "_payload", pp.payload_count, pp.payload_room);
  im.header_pool = make_pool(tag + "_header", pp.header_count, pp.header_room);

  // Latencies between members: the fabric's per-pair delay, and auto's spread.
  double spread = 1.0;
  std::vector<uint64_t> latency_ns;
  if (!o.topology_file.empty()) {
    const auto t0 = static_cast<algos::sim::Picos>(std::llround(o.fabric.latency_us * 1e6));
    const algos::sim::Topology topo = algos::sim::Topology::load(o.topology_file, t0);
    topo.check_fits(o.nodes);
    spread = topo.spread(o.nodes);
    if (o.ports.empty()) {
      latency_ns.resize(uint64_t{o.nodes} * o.nodes);
      for (uint32_t a = 0; a < o.nodes; ++a)
        for (uint32_t b = 0; b < o.nodes; ++b) latency_ns[uint64_t{a} * o.nodes + b] = topo.latency(a, b) / 1000;
    }
  }

  std::vector<drivers::Port*> ports;
  if (o.ports.empty()) {
    drivers::Fabric::Options fo;
    fo.nodes = o.nodes;
    fo.lanes = o.lanes;
    fo.rate_mbit = o.fabric.rate_mbit;
    fo.latency_ns = static_cast<uint64_t>(std::llround(o.fabric.latency_us * 1000.0));
    fo.latency_matrix_ns = std::move(latency_ns);
    fo.loss = o.fabric.loss;
    fo.seed = o.fabric.seed;
    fo.queue_frames = o.fabric.queue_frames;
    fo.max_frame_bytes = pp.max_frame;
    fo.pool = im.header_pool.get();  // multicast copies are header-sized indirect mbufs
    im.fabric = std::make_unique<drivers::Fabric>(fo);
    im.fabric_task = std::make_unique<FabricTask>(*im.fabric);
    for (uint32_t r = 0; r < o.nodes; ++r) ports.push_back(&im.fabric->port(r));
  } else {
    // One DPDK port per member, any PMD: e.g. af_packet on the veths of a bridge.
    drivers::DpdkPortOptions po;
    po.max_frame_bytes = pp.max_frame;
    po.rx_pool = im.payload_pool.get();
    po.lanes = o.lanes;
    for (const auto& devargs : o.ports) {
      im.own_ports.push_back(drivers::DpdkPort::open(devargs, po));
      ports.push_back(im.own_ports.back().get());
    }
  }
  std::vector<drivers::PeerAddress> addrs;
  for (drivers::Port* p : ports) addrs.push_back(p->address());

  engine::NodeConfig nc;
  nc.group_id = gid;
  nc.epoch = fresh_epoch();
  nc.nodes = o.nodes;
  nc.lanes = o.lanes;
  nc.segment_bytes = im.segment;
  nc.max_message_bytes = o.max_message_bytes;
  nc.window = o.window;
  nc.peer_timeout_ns = static_cast<uint64_t>(o.peer_timeout_ms * 1e6);
  nc.lane_rate_bps = static_cast<uint64_t>(o.port_rate_mbit * 1e6);
  nc.pace_overhead_bytes = o.port_overhead_bytes;
  nc.algo_options.root_delay_ns = static_cast<uint64_t>(std::llround(o.mcast_root_delay_us * 1e3));
  nc.algo_options.sync_seed = o.mcast_sync_seed;
  const engine::Pools pools{im.payload_pool.get(), im.header_pool.get()};
  const std::optional<algos::Algo> algo = o.algo == "auto" ? std::nullopt : algos::algo_by_name(o.algo);
  if (!o.auto_rules_file.empty()) im.rules = load_rules(o.auto_rules_file);
  const algos::autoselect::Rules* rules = im.rules ? &*im.rules : &algos::autoselect::Rules::defaults();
  for (uint32_t r = 0; r < o.nodes; ++r) {
    nc.rank = r;
    im.nodes.push_back(std::make_unique<engine::Node>(nc, *ports[r], pools, addrs));
    g->members_.push_back(std::unique_ptr<Member>(new Member(im.nodes.back().get(), algo, rules, spread)));
  }

  // The switch on the first core; members spread round-robin over all cores.
  // Each task learns the waker of its core, so arrivals wake a sleeping core.
  park_all();
  if (im.fabric_task) {
    im.placement.emplace_back(pollers_[0].get(), im.fabric_task.get());
    im.fabric->set_waker(&pollers_[0]->waker());
  }
  for (uint32_t r = 0; r < o.nodes; ++r) {
    engine::Poller* p = pollers_[r % pollers_.size()].get();
    im.placement.emplace_back(p, im.nodes[r].get());
    im.nodes[r]->attach_waker(&p->waker());
  }
  for (auto& [poller, task] : im.placement) poller->add(task);
  unpark_all();
  return g;
}

LocalGroup::~LocalGroup() {
  if (engine_ == nullptr || !impl_) return;
  engine_->park_all();
  for (auto& [poller, task] : impl_->placement) poller->remove(task);
  for (auto& n : impl_->nodes) n->attach_waker(nullptr);
  if (impl_->fabric) impl_->fabric->set_waker(nullptr);
  engine_->unpark_all();
  // Nodes release their frames before the fabric and the pools go.
  impl_->nodes.clear();
  impl_->fabric_task.reset();
  impl_->fabric.reset();
  impl_->own_ports.clear();
}

PortCounters LocalGroup::port_counters(Rank r) const {
  if (r >= members_.size()) throw std::out_of_range("no member " + std::to_string(r));
  const drivers::Port& p = impl_->fabric ? static_cast<const drivers::Port&>(impl_->fabric->port(r))
                                         : *impl_->own_ports[r];
  const drivers::PortStats s = p.stats();
  return PortCounters{s.rx_frames, s.tx_frames, s.tx_full, s.rx_missed, s.rx_errors, s.tx_errors, s.rx_no_buffer};
}

FabricCounters LocalGroup::fabric_counters() const {
  if (!impl_->fabric) return {};
  const auto& c = impl_->fabric->counters();
  return FabricCounters{c.switched, c.lost, c.queue_drops, c.unknown_destination, c.replicated, c.pool_drops};
}

GroupCaps LocalGroup::caps() const {
  const drivers::PortCaps& c = impl_->nodes.at(0)->port_caps();
  return GroupCaps{c.multicast, c.tx_chained, c.rx_wakeup, impl_->segment};
}

LocalGroup::Footprint LocalGroup::footprint_per_member() const {
  Footprint f;
  const uint64_t p = impl_->nodes.size();
  for (const auto& n : impl_->nodes) {
    const engine::Node::Footprint m = n->footprint();
    f.channels += m.channels;
    f.flight += m.flight;
    f.owed += m.owed;
    f.store += m.store;
    f.stash += m.stash;
    f.datagrams += m.datagrams;
    f.other += m.other;
  }
  for (uint64_t* part : {&f.channels, &f.flight, &f.owed, &f.store, &f.stash, &f.datagrams, &f.other}) *part /= p;
  f.pools = impl_->pool_bytes / p;
  if (impl_->fabric) {
    const auto& fo = impl_->fabric->options();
    // Per (member, lane): two rings of pointers and the switch's output buffer.
    const uint64_t per_lane = 2 * (uint64_t{fo.ring_size} * sizeof(void*) + 128) + uint64_t{fo.queue_frames} * 16;
    f.fabric = per_lane * fo.lanes + (fo.latency_matrix_ns.size() * sizeof(uint64_t)) / p;
  }
  return f;
}

}  // namespace lanecast
