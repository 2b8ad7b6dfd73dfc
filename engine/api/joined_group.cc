// Group: this process's member of a group spread over processes. Opens the
// member's port, runs the spec's bootstrap on it to learn every member's
// address and the group's epoch, then hands the member to a polling core.
#include <rte_mbuf.h>

#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "drivers/backlog/backlog_port.h"
#include "drivers/delay/delay_port.h"
#include "drivers/dpdk/dpdk_port.h"
#include "drivers/lanes/handoff_port.h"
#include "drivers/loss/multicast_loss_port.h"
#include "engine/auth/epoch_keys.h"
#include "engine/group/address_seed.h"
#include "drivers/lanes/port_per_lane.h"
#include "engine/group/fault_keys.h"
#include "engine/group/fault_setup.h"
#include "engine/bootstrap/exchange_bootstrap.h"
#include "engine/bootstrap/pmix_bootstrap.h"
#include "engine/bootstrap/static_bootstrap.h"
#include "engine/bootstrap/wire_discovery.h"
#include "engine/runtime/clock.h"
#include "engine/group/group_setup.h"
#include "engine/group/group_shape.h"
#include "engine/runtime/lane_io_task.h"
#include "lanecast/lanecast.h"
#include "engine/api/member_internals.h"
#include "engine/api/node_config_of.h"
#include "engine/node/node.h"
#include "engine/runtime/poller.h"
#include "engine/group/lane_port.h"
#include "engine/runtime/port_locality.h"

namespace lanecast {
namespace {

void validate(const GroupSpec& s, Rank me) {
  const std::string where = s.source.empty() ? "group '" + s.name + "'" : s.source;
  const auto bad = [&](const std::string& what) { return std::invalid_argument(where + ": " + what); };
  if (s.members.empty()) throw bad("no members");
  if (me >= s.members.size())
    throw bad("rank " + std::to_string(me) + " is not a member (ranks 0.." + std::to_string(s.members.size() - 1) + ")");
  for (size_t r = 0; r < s.members.size(); ++r)
    if (s.members[r].rank != r) throw bad("members must be listed by rank 0..n-1");
  if (s.lanes == 0 || s.lanes > 4) throw bad("lanes must be 1..4");
  if (s.members[me].lanes.size() != s.lanes)
    throw bad("rank " + std::to_string(me) + " names " + std::to_string(s.members[me].lanes.size()) +
              " ports for " + std::to_string(s.lanes) + " lane(s)");
  if (s.algo != "auto" && !algos::algo_by_name(s.algo)) throw bad("unknown algorithm '" + s.algo + "'");
  if (s.window == 0 || s.window > engine::reliable::SendChannel::kMaxWindow)
    throw bad("window must be 1.." + std::to_string(engine::reliable::SendChannel::kMaxWindow));
  for (const auto& [name, ms] : {std::pair{"peer_timeout_ms", s.peer_timeout_ms}, {"bootstrap_timeout_ms", s.bootstrap_timeout_ms}})
    if (!timeout_in_range(ms)) {
      char text[32];
      std::snprintf(text, sizeof text, "%.10g", ms);
      throw bad(std::string(name) + " is " + text + ", out of range; allowed " + kTimeoutRange);
    }
  if (s.max_message_bytes == 0 || s.max_message_bytes > (uint64_t{1} << 32)) throw bad("messages of 1 byte to 4 GiB");
  if (s.segment_bytes > 9000) throw bad("segment size must be 0 (from the MTU) or at most 9000 bytes");
  // Verbs lanes: every member on an adapter port, formed by pmix.
  size_t on_verbs = 0;
  for (const auto& m : s.members) {
    try {
      on_verbs += engine::member_verbs_lane(m.lanes).has_value();
    } catch (const std::invalid_argument& e) {
      throw bad("rank " + std::to_string(m.rank) + ": " + e.what());
    }
  }
  if (on_verbs != 0 && on_verbs != s.members.size())
    throw bad("every member is on verbs lanes or none is (" + std::to_string(on_verbs) + " of " +
              std::to_string(s.members.size()) + " are): a UD queue pair and an Ethernet port cannot talk");
  if (on_verbs != 0)
    if (std::string why = engine::verbs_group_refusal(s.bootstrap, s.key != nullptr); !why.empty()) throw bad(why);
  if (!(s.port_rate_mbit >= 0) || !std::isfinite(s.port_rate_mbit)) throw bad("port rate must be >= 0 Mbit/s");
  if (s.bootstrap != "static" && s.bootstrap != "discovery" && s.bootstrap != "pmix" && s.bootstrap != "exchange")
    throw bad("bootstrap must be static, discovery, pmix or exchange, not '" + s.bootstrap + "'");
  if (s.bootstrap == "exchange" && !s.exchange)
    throw bad("bootstrap \"exchange\" needs GroupSpec::exchange, the function that carries the members' records");
  engine::check_faults(s.faults, static_cast<uint32_t>(s.members.size()), where);
}

std::string ms(uint64_t from, uint64_t to) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f ms", static_cast<double>(to - from) / 1e6);
  return b;
}

}  // namespace

struct Group::Impl {
  engine::PoolPtr payload_pool;
  engine::PoolPtr header_pool;
  std::unique_ptr<drivers::Port> port;  // one DPDK port, or one per lane (PortPerLane)
  engine::bootstrap::EndpointTable table;
  engine::AddressSeedClaim seed;  // the group's multicast addresses (released after the node left them)
  std::unique_ptr<engine::Node> node;
  engine::Poller* poller = nullptr;
  std::optional<algos::autoselect::Rules> rules;
  uint32_t segment = 0;
  std::string join_steps;
  std::string placement;  // Group::placement()
  // Lanes another polling core than the member's drives (HandoffPort).
  struct LaneIo {
    drivers::HandoffPort* port;
    std::unique_ptr<engine::LaneIoTask> task;
    engine::Poller* poller;
  };
  std::vector<LaneIo> lane_io;
};

namespace {

// Member `me`'s segment (from its ports' MTU unless the spec sets one) and
// pools. Each port receives into buffers of its own: the pools are sized as
// for one member per port.
struct MemberPlan {
  uint32_t segment;
  engine::PoolPlan pools;
};

// A key is known once resolved (the spec's, or the environment's): a keyed
// group on verbs lanes does not form by discovery (lane_port.h says why).
void refuse_keyed_verbs_discovery(const GroupSpec& spec, Rank me, bool keyed) {
  if (keyed && spec.bootstrap == "discovery" && engine::member_verbs_lane(spec.members[me].lanes))
    throw std::invalid_argument((spec.source.empty() ? spec.name : spec.source) + ": " +
                                engine::verbs_group_refusal("discovery", true));
}

MemberPlan plan_member(const GroupSpec& spec, Rank me, bool sealed) {
  const std::vector<std::string>& ports = spec.members[me].lanes;
  const uint32_t segment = engine::segment_for(spec.segment_bytes, ports, sealed);
  return {segment, engine::plan_pools(spec.max_message_bytes, segment, static_cast<uint32_t>(spec.members.size()),
                                      static_cast<uint32_t>(ports.size()), ports,
                                      engine::resolve_streams(spec.streams, spec.algo,
                                                              static_cast<uint32_t>(spec.members.size())),
                                      sealed)};
}

}  // namespace

uint64_t Group::memory_bytes(const GroupSpec& spec, Rank me) {
  validate(spec, me);
  const bool keyed = resolve_key(spec) != nullptr;
  refuse_keyed_verbs_discovery(spec, me, keyed);
  return engine::pool_bytes(plan_member(spec, me, keyed).pools);
}

std::unique_ptr<Group> Engine::join(const GroupSpec& spec, Rank me) {
  validate(spec, me);
  auto g = std::unique_ptr<Group>(new Group());
  g->spec_ = spec;
  g->engine_ = this;
  g->impl_ = std::make_unique<Group::Impl>();
  auto& im = *g->impl_;
  // The rules for "auto" first: a file that does not parse stops the join
  // before this member takes a port or waits for the others.
  if (!spec.auto_rules_file.empty()) im.rules = engine::load_rules(spec.auto_rules_file);
  const uint64_t t_start = engine::now_ns();
  const uint32_t n = static_cast<uint32_t>(spec.members.size());
  const std::vector<std::string>& my_ports = spec.members[me].lanes;

  // The group's secret, if any: every frame of this member is sealed with
  // keys derived from it (docs/security.md), the bootstrap's hellos too.
  const std::shared_ptr<const AuthKey> secret = resolve_key(spec);
  // The static bootstrap's epoch is the file's, the same every run, and so
  // would the keys be: frames recorded in one run would open in the next.
  if (secret && spec.bootstrap == "static")
    throw std::invalid_argument((spec.source.empty() ? "group '" + spec.name + "'" : spec.source) +
                                ": a group with a key forms by discovery or pmix, not static: a static group's "
                                "epoch is the same every run, so frames recorded in one run would open in the next "
                                "(docs/security.md)");
  refuse_keyed_verbs_discovery(spec, me, secret != nullptr);
  const MemberPlan plan = plan_member(spec, me, secret != nullptr);
  GroupSpec keyed = spec;  // what the bootstraps see: the key as resolved
  keyed.key = secret;
  im.segment = plan.segment;
  const engine::PoolPlan& pp = plan.pools;
  // Pool names are per process; one engine may join several groups.
  const std::string tag = "j" + std::to_string(next_group_id_++);
  // One core at a time takes and gives back this member's buffers (its
  // polling core, or the thread driving it in calls): no per-lcore caches,
  // whose megabytes every process would zero at start-up, slowing a group's
  // formation on shared CPUs; an uncontended ring operation per burst is cheap.
  im.payload_pool = engine::make_pool(tag + "_payload", pp.payload_count, pp.payload_room, /*lcore_caches=*/false);
  im.header_pool = engine::make_pool(tag + "_header", pp.header_count, pp.header_room, /*lcore_caches=*/false);

  const uint64_t t_pools = engine::now_ns();
  // The polling core of each lane, nearest its port (hwloc); lane 0's runs
  // the member. In calls there is none: the application's thread does all.
  std::vector<engine::PortLocality> near;
  for (const std::string& devargs : my_ports) near.push_back(engine::locality_of(devargs));
  std::vector<size_t> lane_core = opts_.progress_in_calls ? std::vector<size_t>(near.size(), 0)
                                                          : engine::lane_cores(poller_cpus(), near);
  const std::optional<engine::VerbsLane> verbs = engine::member_verbs_lane(my_ports);
  if (verbs) lane_core.assign(lane_core.size(), lane_core[0]);  // one adapter port: its queue pairs share a core
  drivers::DpdkPortOptions po;
  po.max_frame_bytes = pp.max_frame;
  po.rx_pool = im.payload_pool.get();
  po.lanes = 1;
  std::string port_caps;
  if (verbs) {
    // One adapter port, a UD queue pair per lane; its lanes share the
    // member's polling core (a lane per core: a later step).
    im.port = engine::open_verbs_port(*verbs, spec.lanes, im.payload_pool.get(), pp.max_frame, &port_caps);
  } else if (spec.lanes == 1) {
    im.port = drivers::DpdkPort::open(my_ports[0], po);
  } else {
    // A port per lane (two NICs on two switches), sharing one address. A
    // lane whose core is not the member's hands its frames over (rings).
    std::vector<std::unique_ptr<drivers::Port>> lanes;
    for (size_t l = 0; l < my_ports.size(); ++l) {
      std::unique_ptr<drivers::Port> p = drivers::DpdkPort::open(my_ports[l], po);
      if (lane_core[l] != lane_core[0]) {
        auto h = std::make_unique<drivers::HandoffPort>(std::move(p), tag + "_lane" + std::to_string(l));
        im.lane_io.push_back({h.get(), std::make_unique<engine::LaneIoTask>(*h), pollers_[lane_core[l]].get()});
        p = std::move(h);
      }
      lanes.push_back(std::move(p));
    }
    im.port = std::make_unique<drivers::PortPerLane>(std::move(lanes));
  }
  if (!im.lane_io.empty()) {  // running from now: the bootstrap's hellos go through them
    park_all();
    for (auto& io : im.lane_io) {
      io.port->attach_lane_waker(&io.poller->waker());
      io.poller->add(io.task.get());
    }
    unpark_all();
  }

  const uint64_t t_port = engine::now_ns();
  engine::bootstrap::Endpoint mine;
  mine.rank = me;
  mine.lanes.assign(spec.lanes, im.port->address());
  mine.incarnation = engine::bootstrap::fresh_incarnation();
  std::unique_ptr<engine::bootstrap::Bootstrap> boot;
  if (spec.bootstrap == "static") {
    boot = engine::bootstrap::make_static_bootstrap(spec);
  } else if (spec.bootstrap == "discovery") {
    boot = engine::bootstrap::make_wire_discovery(keyed, *im.port, im.header_pool.get());
  } else if (spec.bootstrap == "exchange") {
    boot = engine::bootstrap::make_exchange_bootstrap(keyed);
  } else {
    boot = engine::bootstrap::make_pmix_bootstrap(keyed);
  }
  im.table = boot->exchange(mine);
  if (verbs)  // discovery heard each lane on its own
    for (auto& e : im.table.members)
      if (std::string why = engine::merge_verbs_lanes(&e.lanes); !why.empty())
        throw std::runtime_error((spec.source.empty() ? spec.name : spec.source) + ": rank " + std::to_string(e.rank) + ": " + why);
  const uint64_t t_boot = engine::now_ns();
  // The engine addresses a peer by one address on every lane.
  for (const auto& e : im.table.members)
    for (const drivers::PeerAddress& a : e.lanes)
      if (!(a == e.lanes.at(0)))
        throw std::runtime_error((spec.source.empty() ? spec.name : spec.source) + ": rank " + std::to_string(e.rank) +
                                 "'s lanes have different addresses (" + engine::bootstrap::format_address(a) + ", " +
                                 engine::bootstrap::format_address(e.lanes[0]) +
                                 "): give a member's ports one MAC, each port on its own switch");

  std::vector<drivers::PeerAddress> addrs;
  for (const auto& e : im.table.members) addrs.push_back(e.lanes.at(0));
  // What a faster member sent while this one still ran its discovery, under
  // the decorators below: emulated distance, loss and faults meet those
  // frames as they meet every later one.
  if (std::vector<engine::bootstrap::Bootstrap::EarlyFrame> early = boot->take_early_frames(); !early.empty())
    im.port = std::make_unique<drivers::BacklogPort>(std::move(im.port), early);
  if (spec.emulate_latency) {
    // The sites' distance, on a testbed where they share a switch: hold each
    // peer's frames for the group file's latency from its site to ours.
    drivers::DelayOptions d;
    d.clock = &engine::now_ns;
    const std::vector<uint64_t> delay = engine::latency_to_ns(spec, me);
    for (uint32_t r = 0; r < n; ++r)
      if (r != me && delay[r] > 0) d.delay_ns_of_source.emplace_back(addrs[r], delay[r]);
    im.port = std::make_unique<drivers::DelayPort>(std::move(im.port), d);
  }
  if (spec.mcast_loss > 0)
    im.port = std::make_unique<drivers::MulticastLossPort>(std::move(im.port), spec.mcast_loss,
                                                            spec.mcast_loss_seed + me);
  im.port = engine::fault_port(std::move(im.port), spec.faults, me, addrs, {im.payload_pool.get(), im.header_pool.get()});
  std::string clash;
  std::optional<engine::AddressSeedClaim> seed = engine::AddressSeedClaim::claim(
      engine::address_seed_of(spec.id, im.table), spec.lanes, &clash);
  if (!seed) throw std::runtime_error("group " + spec.name + ": " + clash + "; join again for a new epoch");
  im.seed = std::move(*seed);
  engine::NodeConfig nc = engine::node_config_of(spec, spec.id, im.table.epoch, n, im.segment, spec.finds_rate());
  nc.address_seed = im.seed.seed();
  nc.rank = me;
  nc.fail_stop = true;  // members are processes: one that goes silent is gone for this epoch
  if (secret) {
    // Keys of this formation: every member's incarnation is in them.
    std::vector<uint64_t> lives;
    for (const engine::bootstrap::Endpoint& e : im.table.members) lives.push_back(e.incarnation);
    nc.auth = std::make_shared<const engine::auth::EpochKeys>(
        engine::auth::derive_formation_keys(*secret, spec.id, nc.epoch, lives));
  }
  engine::GroupShapeData shape = engine::shape_of(spec);
  nc.hypercube_order = std::move(shape.hypercube_order);
  nc.site_of_rank = std::move(shape.site_of_rank);
  const engine::Pools pools{im.payload_pool.get(), im.header_pool.get()};
  im.node = std::make_unique<engine::Node>(nc, *im.port, pools, addrs);
  const std::optional<algos::Algo> algo = spec.algo == "auto" ? std::nullopt : algos::algo_by_name(spec.algo);
  const algos::autoselect::Rules* rules = im.rules ? &*im.rules : &algos::autoselect::Rules::defaults();
  g->member_ = std::unique_ptr<Member>(new Member(im.node.get(), algo, rules, 1.0));

  // The member's state belongs to lane 0's core; other lanes' cores only
  // move their frames.
  const size_t pick = lane_core[0];
  const auto core_name = [&](size_t c) {
    return "lcore " + std::to_string(lcores_[c]) + " on CPU " + std::to_string(poller_cpus()[c]);
  };
  if (!port_caps.empty()) im.placement += "port " + im.port->name() + ": " + port_caps + "\n";
  for (size_t l = 0; l < near.size(); ++l) {
    im.placement += "lane " + std::to_string(l) + ": " + near[l].describe();
    if (!opts_.progress_in_calls && near.size() > 1)
      im.placement += lane_core[l] == pick ? ", on the member's core" : ", its frames moved by " + core_name(lane_core[l]);
    im.placement += "\n";
  }
  const bool shared = std::all_of(lane_core.begin(), lane_core.end(), [&](size_t c) { return c == pick; });
  im.placement += opts_.progress_in_calls
                      ? std::string("polling: no polling core; the application's thread, inside its waits\n")
                      : "polling core: " + core_name(pick) + " (of " + std::to_string(pollers_.size()) + "), " +
                            (shared ? "every lane of the member on it\n" : "the member's state on it\n");
  park_all();
  im.poller = pollers_[pick].get();
  im.node->attach_waker(&im.poller->waker());
  if (im.poller->driven_in_calls()) im.node->attach_driver(im.poller);
  im.poller->add(im.node.get());
  unpark_all();
  const std::string steps = boot->steps();
  im.join_steps = "pools " + ms(t_start, t_pools) + ", port " + ms(t_pools, t_port) + ", bootstrap " +
                  ms(t_port, t_boot) + (steps.empty() ? "" : " (" + steps + ")") + ", start " +
                  ms(t_boot, engine::now_ns());
  return g;
}

// A member whose broadcasts are all done may still owe a peer an ack: if its
// last one was lost, the peer sends again and must be answered, or it fails
// the broadcast for a member that simply left. So a member leaves only once
// nothing of its group arrived for longer than the longest retransmission
// timeout (like TCP's TIME-WAIT) - at once when that was long ago - and
// waits at most the peer timeout. An engine that progresses in calls drives
// the member meanwhile: nothing else would answer.
namespace {

bool never(const void*) { return false; }

void linger_until_quiet(const engine::Node& node, engine::Poller& poller, double peer_timeout_ms) {
  constexpr uint64_t kQuietNs = 250'000'000;  // > the channels' largest RTO (200 ms)
  constexpr uint64_t kSliceNs = 10'000'000;
  const uint64_t give_up = engine::now_ns() + static_cast<uint64_t>(peer_timeout_ms * 1e6);
  // Frames that waited in the port while nobody drove it are heard first.
  if (poller.driven_in_calls()) poller.drive_until(never, nullptr, 0);
  for (uint64_t now = engine::now_ns(); now < give_up; now = engine::now_ns()) {
    const uint64_t heard = node.last_heard_ns();  // 0: nothing ever came, nothing is owed
    if (heard + kQuietNs <= now) return;
    const uint64_t until = std::min(heard + kQuietNs, now + kSliceNs);
    if (!poller.driven_in_calls()) {
      const timespec ts{0, static_cast<long>(until - now)};
      nanosleep(&ts, nullptr);
    } else if (!poller.drive_until(never, nullptr, until)) {
      const timespec ts{0, 100'000};  // another thread drives it for now (EngineOptions::idle_look_us)
      nanosleep(&ts, nullptr);
    }
  }
}

}  // namespace

Group::~Group() {
  if (engine_ == nullptr || !impl_) return;
  if (impl_->poller != nullptr) linger_until_quiet(*impl_->node, *impl_->poller, spec_.peer_timeout_ms);
  if (impl_->poller != nullptr || !impl_->lane_io.empty()) {
    engine_->park_all();
    if (impl_->poller != nullptr) {
      impl_->poller->remove(impl_->node.get());
      impl_->node->attach_waker(nullptr);
    }
    for (auto& io : impl_->lane_io) {
      io.poller->remove(io.task.get());
      io.port->detach_lane_waker();
    }
    engine_->unpark_all();
  }
  member_.reset();
  impl_->node.reset();  // frames back to the pools before the port and pools go
  impl_->port.reset();
}

Rank Group::rank() const { return member_->rank(); }
uint32_t Group::size() const { return static_cast<uint32_t>(spec_.members.size()); }
uint32_t Group::epoch() const { return impl_->table.epoch; }
std::string Group::endpoints() const {
  return engine::bootstrap::describe(impl_->table, &engine::describe_lane_address);
}
std::string Group::join_steps() const { return impl_->join_steps; }
std::string Group::placement() const { return impl_->placement; }

PortCounters Group::port_counters() const {
  return engine::port_counters_of(impl_->port->stats());
}

GroupCaps Group::caps() const {
  return engine::group_caps_of(*impl_->node, impl_->segment);
}

}  // namespace lanecast
