// What every kind of group needs set up before its members run: buffer pools
// sized from the group's settings, the segment its links allow, an epoch, the
// rules of `auto`. Shared by LocalGroup (every member in this process) and
// Group (one member per process).
#pragma once

#include <rte_mempool.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "algos/auto/rules.h"
#include "drivers/port.h"
#include "lanecast/group_spec.h"

namespace lanecast {
struct PortCounters;
struct GroupCaps;
}

namespace lanecast::engine {

class Node;

struct PoolDeleter {
  void operator()(rte_mempool* p) const { rte_mempool_free(p); }
};
using PoolPtr = std::unique_ptr<rte_mempool, PoolDeleter>;

// A pktmbuf pool; throws std::runtime_error (with a hint) when DPDK's memory is short.
// lcore_caches: a cache per DPDK lcore in front of the pool's ring, for
// pools that several polling cores share. Each pool then carries
// RTE_MAX_LCORE caches of 12 KiB, zeroed when it is made.
PoolPtr make_pool(const std::string& name, uint32_t count, uint32_t data_room, bool lcore_caches);

// An epoch no earlier incarnation of a group is likely to have had.
uint32_t fresh_epoch();

// The segment a group uses: `segment_bytes` if nonzero, else the largest
// that fits every port's MTU (at most 8 KiB; the fabric's 1400 without ports).
// `sealed`: the group has a key, and its data frames carry two seals.
uint32_t segment_for(uint32_t segment_bytes, const std::vector<std::string>& ports, bool sealed);
// The headers of a data frame of a group with or without a key.
uint32_t data_headers(bool sealed);

algos::autoselect::Rules load_rules(const std::string& path);

// What a group's mempools hold.
struct PoolPlan {
  uint32_t payload_count, payload_room;
  uint32_t header_count, header_room;
  uint32_t max_frame;  // link header included
};
// For `members_here` members of a group of `nodes` in this process, on
// `ports` (their devargs; empty: the in-process fabric).
// `streams`: the group's stream settings (resolved), whose windows hold buffers.
PoolPlan plan_pools(uint64_t max_message_bytes, uint32_t segment, uint32_t nodes, uint32_t members_here,
                    const std::vector<std::string>& ports, const StreamOptions& streams, bool sealed);

// A group's stream settings as its members run them: the fanout chosen from
// the group's algorithm when 0, the window a power of two in 16..65536.
// Throws std::invalid_argument for values no member could run.
StreamOptions resolve_streams(StreamOptions o, const std::string& algo, uint32_t nodes);
uint64_t pool_bytes(const PoolPlan& pp);

// A port's own counters as the public API reports them.
PortCounters port_counters_of(const drivers::PortStats& s);
// What a member's port does for the group, as its node adapted to it.
GroupCaps group_caps_of(const Node& n, uint32_t segment_bytes);

}  // namespace lanecast::engine
