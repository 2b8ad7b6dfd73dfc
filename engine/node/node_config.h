// A node's configuration (NodeConfig): the group, this member's place in
// it, and the engine's knobs - windows, acks, pacing, timeouts. Apart from
// node.h so the node's parts can read it without the node.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "algos/registry.h"
#include "drivers/port.h"
#include "engine/reliable/send_channel.h"
#include "lanecast/group_spec.h"

namespace lanecast::engine {
namespace auth {
struct EpochKeys;
}

// A rate controller's ceiling when the group gave no port rate: a 10 Gbit/s
// port's, the most a lane of this engine's ports has carried.
inline constexpr uint64_t kRateControlCeilingBps = 10'000'000'000;

struct NodeConfig {
  uint32_t group_id = 1;
  uint32_t epoch = 1;                    // the group's incarnation (engine/wire/wire.h)
  // The group's multicast addresses come from this seed (engine/group/address_seed.h),
  // the same in every member. With multicast on and a port that can join
  // them, a multicast is one frame to the group address; otherwise (off, or
  // a join refused: multicast_fallback() says why) one datagram per member.
  drivers::GroupAddressSeed address_seed;
  bool multicast = true;
  // Members are processes that may die (Engine::join): the first broadcast to
  // fail makes the group broken for this epoch - the member tells every
  // other member (failure notices), and every broadcast still running or
  // posted later fails at once (OpError::GroupBroken) naming the lost rank.
  // Off for members of one process, where a silent member is a stalled
  // thread that comes back, and channels carry on (they stay in step).
  bool fail_stop = false;
  algos::Rank rank = 0;
  uint32_t nodes = 1;
  uint16_t lanes = 1;                    // lanes the algorithms may use (<= the port's)
  uint32_t segment_bytes = 1400;
  uint64_t max_message_bytes = 16u << 20;
  uint32_t window = 128;                 // frames in flight per (peer, lane)
  reliable::RttParams rtt;
  uint64_t peer_timeout_ns = 3'000'000'000;  // silence that fails an operation
  uint32_t stash_frames = 1024;          // early frames of the next operation kept
  // Channels with frames in flight at once (slabs of the flight pool); 0:
  // min(32, peers x lanes). More only helps a node that sends to many peers
  // at once (linear's root, symmetric).
  uint32_t active_channels = 0;
  // Acks: at most this many data frames per ack (0: window / 4), and none
  // later than ack_delay_ns after the first unacknowledged frame. Frames that
  // ask for an ack (wire::kFlagAckNow) and frames past a gap get one at once.
  uint32_t ack_every = 0;
  uint64_t ack_delay_ns = 500'000;
  // Pacing: each lane sends at most this many bits per second (0: as fast as
  // the port takes frames), in bursts of at most pace_burst_bytes (0: 200 us
  // of the rate, at least two frames).
  uint64_t lane_rate_bps = 0;
  uint64_t pace_burst_bytes = 0;
  // Bytes the link adds to each frame as its rate counts them: 24 on an
  // Ethernet wire (preamble, FCS, gap), 0 for a Linux tbf (it counts the frame).
  uint32_t pace_overhead_bytes = 24;
  // Each lane's pacer follows a rate controller (engine/reliable/rate_control.h)
  // fed by the lane's RTT samples and losses; lane_rate_bps is its ceiling
  // (0: kRateControlCeilingBps).
  bool rate_control = false;
  uint64_t min_scan_interval_ns = 20'000;  // timers are checked at most this often
  algos::AlgoOptions algo_options;       // the group's (mcast_chain's root delay, sync seed)
  lanecast::StreamOptions streams;       // fanout resolved (>= 1)
  // The epoch's keys when the group has one (docs/security.md): every frame
  // sent is sealed, every frame received must open. Null: no seals.
  std::shared_ptr<const auth::EpochKeys> auth;
  // The group's shape (algos::GroupShape), equal on every member: the
  // hypercube's order and each rank's site. Empty: rank order, one site.
  std::vector<algos::Rank> hypercube_order;
  std::vector<uint32_t> site_of_rank;
  // Test hook, never set in production: forwarding copies each received
  // payload into a fresh buffer. The zero-copy test turns it on to show that
  // it notices a copying forward path.
  bool test_copy_forwarded_payloads = false;
};

}  // namespace lanecast::engine
