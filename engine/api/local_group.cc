// LocalGroup: p members in one process, on the in-process fabric or on one
// DPDK port each.
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>


#include "algos/sim/latency_map.h"
#include "engine/api/node_config_of.h"
#include "drivers/dpdk/dpdk_port.h"
#include "drivers/ethernet.h"
#include "drivers/fabric/fabric.h"
#include "drivers/loss/multicast_loss_port.h"
#include "engine/auth/epoch_keys.h"
#include "engine/bootstrap/endpoints.h"
#include "engine/group/fault_keys.h"
#include "engine/group/fault_setup.h"
#include "engine/group/address_seed.h"
#include "engine/group/group_setup.h"
#include "lanecast/lanecast.h"
#include "engine/node/node.h"
#include "engine/runtime/poller.h"
#include "engine/group/lane_port.h"
#include "engine/wire/wire.h"

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

uint32_t segment_for(const GroupOptions& o) { return engine::segment_for(o.segment_bytes, o.ports, o.key != nullptr); }

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
  // Ports on verbs (a UD queue pair per lane on an adapter port) talk only to each other.
  const auto verbs = std::count_if(o.ports.begin(), o.ports.end(),
                                   [](const std::string& p) { return engine::parse_verbs_lane(p).has_value(); });
  if (verbs != 0 && static_cast<size_t>(verbs) != o.ports.size())
    throw std::invalid_argument("group: the ports are all verbs:DEVICE:PORT or all DPDK devargs, not both");
  if (verbs != 0 && !engine::verbs_port_built())
    throw std::invalid_argument("group: " + engine::verbs_group_refusal("pmix", false));
  if (o.max_message_bytes > (uint64_t{1} << 32)) throw std::invalid_argument("group: messages of at most 4 GiB");
  if (o.algo != "auto" && !algos::algo_by_name(o.algo))
    throw std::invalid_argument("group: unknown algorithm '" + o.algo + "'");
  if (!(o.fabric.loss >= 0 && o.fabric.loss < 1)) throw std::invalid_argument("group: loss must be in [0, 1)");
  if (!(o.fabric.rate_mbit >= 0) || !(o.fabric.latency_us >= 0))
    throw std::invalid_argument("group: rate and latency must not be negative");
  if (!(o.port_rate_mbit >= 0) || !std::isfinite(o.port_rate_mbit))
    throw std::invalid_argument("group: port rate must be a finite number of Mbit/s >= 0");
  if (o.port_overhead_bytes > 1024) throw std::invalid_argument("group: port overhead must be 0..1024 bytes per frame");
  if (!timeout_in_range(o.peer_timeout_ms)) {
    char text[32];
    std::snprintf(text, sizeof text, "%.10g", o.peer_timeout_ms);
    throw std::invalid_argument(std::string("group: peer_timeout_ms is ") + text + ", out of range; allowed " +
                                kTimeoutRange);
  }
  const bool mcast_options = o.mcast_root_delay_us != 0 || o.mcast_sync_seed != 0;
  if (mcast_options && o.algo != "mcast_chain" && o.algo != "auto")
    throw std::invalid_argument("group: mcast_root_delay_us and mcast_sync_seed apply to algorithm mcast_chain "
                                "(or auto), not to '" + o.algo + "'");
  if (!(o.mcast_root_delay_us >= 0) || !(o.mcast_root_delay_us * 1e-3 < o.peer_timeout_ms))
    throw std::invalid_argument("group: mcast_root_delay_us must be at least 0 and below the peer timeout (" +
                                std::to_string(o.peer_timeout_ms) + " ms)");
  if (o.window == 0 || o.window > engine::reliable::SendChannel::kMaxWindow)
    throw std::invalid_argument("group: window must be 1.." + std::to_string(engine::reliable::SendChannel::kMaxWindow));
  if (!(o.mcast_loss >= 0 && o.mcast_loss < 1)) throw std::invalid_argument("group: multicast loss must be in [0, 1)");
  engine::check_faults(o.faults, o.nodes, "group");
}

}  // namespace

uint64_t LocalGroup::memory_bytes(const GroupOptions& o) {
  validate(o);
  return engine::pool_bytes(engine::plan_pools(o.max_message_bytes, segment_for(o), o.nodes, o.nodes, o.ports,
                                                     engine::resolve_streams(o.streams, o.algo, o.nodes),
                                                     o.key != nullptr));
}

struct LocalGroup::Impl {
  engine::PoolPtr payload_pool;
  engine::PoolPtr header_pool;
  uint32_t segment = 0;
  uint64_t pool_bytes = 0;
  std::unique_ptr<drivers::Fabric> fabric;                    // the in-process fabric, or
  std::vector<std::unique_ptr<drivers::Port>> own_ports;  // one port per member (DPDK or verbs)
  std::unique_ptr<FabricTask> fabric_task;
  std::vector<std::unique_ptr<engine::Node>> nodes;
  std::vector<std::pair<engine::Poller*, engine::PollTask*>> placement;
  std::optional<algos::autoselect::Rules> rules;  // from GroupOptions::auto_rules_file
  std::vector<std::unique_ptr<drivers::MulticastLossPort>> lossy;  // GroupOptions::mcast_loss
  std::vector<std::unique_ptr<drivers::Port>> faulty;  // GroupOptions::faults (drivers/fault/)
  std::vector<drivers::Port*> ports;  // each node's port, as the node sees it
  engine::AddressSeedClaim seed;         // the group's multicast addresses
};

std::unique_ptr<LocalGroup> Engine::create_local_group(const GroupOptions& o) {
  validate(o);
  const uint32_t gid = next_group_id_++;
  auto g = std::unique_ptr<LocalGroup>(new LocalGroup());
  g->opts_ = o;
  g->engine_ = this;
  g->impl_ = std::make_unique<LocalGroup::Impl>();
  auto& im = *g->impl_;

  im.segment = segment_for(o);
  g->opts_.segment_bytes = im.segment;
  g->opts_.streams = engine::resolve_streams(o.streams, o.algo, o.nodes);
  const engine::PoolPlan pp = engine::plan_pools(o.max_message_bytes, im.segment, o.nodes, o.nodes, o.ports,
                                                    engine::resolve_streams(o.streams, o.algo, o.nodes),
                                                    o.key != nullptr);
  im.pool_bytes = engine::pool_bytes(pp);
  const std::string tag = "g" + std::to_string(gid);
  im.payload_pool = engine::make_pool(tag + "_payload", pp.payload_count, pp.payload_room, /*lcore_caches=*/true);
  im.header_pool = engine::make_pool(tag + "_header", pp.header_count, pp.header_room, /*lcore_caches=*/true);

  // Latencies between members: the fabric's per-pair delay, and auto's spread.
  double spread = 1.0;
  std::vector<uint64_t> latency_ns;
  if (!o.topology_file.empty()) {
    const auto t0 = static_cast<algos::sim::Picos>(std::llround(o.fabric.latency_us * 1e6));
    const algos::sim::LatencyMap topo = algos::sim::LatencyMap::load(o.topology_file, t0);
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
    fo.pool = im.header_pool.get();  // multicast copies: a header buffer each (Fabric::replicate)
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
      if (const std::optional<engine::VerbsLane> v = engine::parse_verbs_lane(devargs))
        im.own_ports.push_back(engine::open_verbs_port(*v, o.lanes, im.payload_pool.get(), pp.max_frame));
      else
        im.own_ports.push_back(drivers::DpdkPort::open(devargs, po));
      ports.push_back(im.own_ports.back().get());
    }
  }
  std::vector<drivers::PeerAddress> addrs;
  for (drivers::Port* p : ports) addrs.push_back(p->address());
  if (o.mcast_loss > 0)
    for (uint32_t r = 0; r < o.nodes; ++r) {
      im.lossy.push_back(std::make_unique<drivers::MulticastLossPort>(*ports[r], o.mcast_loss, o.mcast_loss_seed + r));
      ports[r] = im.lossy.back().get();
    }
  for (uint32_t r = 0; r < o.nodes; ++r)
    if (auto p = engine::fault_port(*ports[r], o.faults, r, addrs, {im.payload_pool.get(), im.header_pool.get()})) {
      im.faulty.push_back(std::move(p));
      ports[r] = im.faulty.back().get();
    }
  im.ports = ports;
  im.seed = engine::AddressSeedClaim::claim_random(o.lanes);

  engine::NodeConfig nc = engine::node_config_of(o, gid, engine::fresh_epoch(), o.nodes, im.segment, o.rate_control);
  nc.address_seed = im.seed.seed();
  if (o.key) {
    // The members share one life: one random value stands for every
    // member's incarnation, so two groups of one epoch still differ.
    const uint64_t life[1] = {engine::bootstrap::fresh_incarnation()};
    nc.auth = std::make_shared<const engine::auth::EpochKeys>(
        engine::auth::derive_formation_keys(*o.key, gid, nc.epoch, life));
  }
  const engine::Pools pools{im.payload_pool.get(), im.header_pool.get()};
  const std::optional<algos::Algo> algo = o.algo == "auto" ? std::nullopt : algos::algo_by_name(o.algo);
  if (!o.auto_rules_file.empty()) im.rules = engine::load_rules(o.auto_rules_file);
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
    if (p->driven_in_calls()) im.nodes[r]->attach_driver(p);
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
  impl_->faulty.clear();
  impl_->lossy.clear();
  impl_->fabric_task.reset();
  impl_->fabric.reset();
  impl_->own_ports.clear();
}

PortCounters LocalGroup::port_counters(Rank r) const {
  if (r >= members_.size()) throw std::out_of_range("no member " + std::to_string(r));
  return engine::port_counters_of(impl_->ports[r]->stats());
}

FabricCounters LocalGroup::fabric_counters() const {
  if (!impl_->fabric) return {};
  const auto& c = impl_->fabric->counters();
  return FabricCounters{c.switched, c.lost, c.queue_drops, c.unknown_destination, c.replicated, c.not_joined, c.pool_drops};
}

GroupCaps LocalGroup::caps() const {
  return engine::group_caps_of(*impl_->nodes.at(0), impl_->segment);
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
