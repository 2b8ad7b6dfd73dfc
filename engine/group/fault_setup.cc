#include "engine/group/fault_setup.h"

#include <cmath>

#include "drivers/fault/fault_port.h"
#include "engine/runtime/clock.h"
#include "engine/group/fault_keys.h"
#include "engine/wire/wire.h"

namespace lanecast::engine {
namespace {

bool applies(const FaultRule& r, uint32_t rank) {
  return (r.member == UINT32_MAX || r.member == rank) && (r.peer == UINT32_MAX || r.peer != rank) &&
         any_fault(r.faults);
}

drivers::FaultProfile profile_of(const LinkFaults& f) {
  drivers::FaultProfile p;
  p.loss = f.loss;
  p.burst_enter = f.burst_enter;
  p.burst_leave = f.burst_leave;
  p.burst_loss_good = f.burst_loss_good;
  p.burst_loss_bad = f.burst_loss_bad;
  p.reorder = f.reorder;
  p.reorder_gap = f.reorder_gap;
  p.duplicate = f.dup;
  p.corrupt = f.corrupt;
  p.delay_ns = static_cast<uint64_t>(std::llround(f.delay_us * 1e3));
  p.jitter_ns = static_cast<uint64_t>(std::llround(f.jitter_us * 1e3));
  return p;
}

// The member's own rules as the port takes them: it chooses among them by
// peer and by unicast/multicast; of a rule for every member and one for this
// member that select the same frames, the member's own is the one it gets.
drivers::FaultPortOptions port_options(const FaultOptions& f, uint32_t rank,
                                       const std::vector<drivers::PeerAddress>& addrs, const Pools& pools) {
  drivers::FaultPortOptions o;
  for (const FaultRule& r : f.rules) {
    if (!(r.member == UINT32_MAX || r.member == rank) || (r.peer != UINT32_MAX && r.peer == rank)) continue;
    if (r.member == UINT32_MAX) {
      bool shadowed = false;
      for (const FaultRule& mine : f.rules)
        shadowed = shadowed || (mine.member == rank && mine.send == r.send && mine.peer == r.peer &&
                                mine.frames == r.frames);
      if (shadowed) continue;
    }
    drivers::FaultRule d;
    d.way = r.send ? drivers::FaultWay::Send : drivers::FaultWay::Receive;
    if (r.peer != UINT32_MAX) d.peer = addrs.at(r.peer);
    d.frames = r.frames == FaultRule::Frames::All       ? drivers::FaultFrames::All
               : r.frames == FaultRule::Frames::Unicast ? drivers::FaultFrames::Unicast
                                                        : drivers::FaultFrames::Multicast;
    d.faults = profile_of(r.faults);
    o.rules.push_back(d);
  }
  for (uint32_t r = 0; r < addrs.size(); ++r)
    if (r != rank) o.links.push_back(addrs[r]);
  // A stream per member: the same seed gives each member other faults.
  o.seed = f.seed * 0x9E3779B97F4A7C15ULL + rank;
  // Enough for a millisecond's frames at 10 Gbit/s, per lane and way.
  o.queue_frames = 2048;
  o.header_bytes = wire::kDataHeaderBytes;
  o.clone_pool = pools.header;
  o.copy_pool = pools.payload;  // room for a whole frame
  o.clock = &now_ns;
  return o;
}

}  // namespace

bool faults_apply(const FaultOptions& f, uint32_t rank) {
  for (const FaultRule& r : f.rules)
    if (applies(r, rank)) return true;
  return false;
}

std::unique_ptr<drivers::Port> fault_port(drivers::Port& inner, const FaultOptions& f, uint32_t rank,
                                          const std::vector<drivers::PeerAddress>& addrs, const Pools& pools) {
  if (!faults_apply(f, rank)) return nullptr;
  return std::make_unique<drivers::FaultPort>(inner, port_options(f, rank, addrs, pools));
}

std::unique_ptr<drivers::Port> fault_port(std::unique_ptr<drivers::Port> inner, const FaultOptions& f, uint32_t rank,
                                          const std::vector<drivers::PeerAddress>& addrs, const Pools& pools) {
  if (!faults_apply(f, rank)) return inner;
  return std::make_unique<drivers::FaultPort>(std::move(inner), port_options(f, rank, addrs, pools));
}

}  // namespace lanecast::engine
