// The settings a member's node takes from its group's options, in one place
// for both kinds of group: a local group's (GroupOptions, every member in
// this process) and a joined one's (GroupSpec, one member per process). The
// two option types name these fields alike; what differs between the kinds
// (the rank, the key, fail-stop, the group's shape) each caller adds.
#pragma once

#include <cmath>
#include <cstdint>

#include "engine/group/group_setup.h"
#include "engine/node/node.h"

namespace lanecast::engine {

template <class GroupOptionsOrSpec>
NodeConfig node_config_of(const GroupOptionsOrSpec& o, uint32_t group_id, uint32_t epoch, uint32_t nodes,
                          uint32_t segment_bytes, bool rate_control) {
  NodeConfig nc;
  nc.group_id = group_id;
  nc.epoch = epoch;
  nc.multicast = o.multicast;
  nc.nodes = nodes;
  nc.lanes = o.lanes;
  nc.segment_bytes = segment_bytes;
  nc.max_message_bytes = o.max_message_bytes;
  nc.window = o.window;
  nc.peer_timeout_ns = static_cast<uint64_t>(o.peer_timeout_ms * 1e6);
  nc.lane_rate_bps = static_cast<uint64_t>(o.port_rate_mbit * 1e6);
  nc.rate_control = rate_control;
  nc.pace_overhead_bytes = o.port_overhead_bytes;
  nc.streams = resolve_streams(o.streams, o.algo, nodes);
  nc.algo_options.root_delay_ns = static_cast<uint64_t>(std::llround(o.mcast_root_delay_us * 1e3));
  nc.algo_options.sync_seed = o.mcast_sync_seed;
  nc.algo_options.nack_repair = o.mcast_repair_on_request;
  return nc;
}

}  // namespace lanecast::engine
