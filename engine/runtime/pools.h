// The two DPDK mempools a member's node takes its frames from: payload
// buffers (the root's segments, flattened frames) and small header buffers
// (headers, acks). Made per member (packed_pool.h), named here so that parts
// which only pass them on need not know the node.
#pragma once

struct rte_mempool;

namespace lanecast::engine {

struct Pools {
  rte_mempool* payload = nullptr;  // root's segment buffers (and flattened frames)
  rte_mempool* header = nullptr;   // header and ack frames
};

}  // namespace lanecast::engine
