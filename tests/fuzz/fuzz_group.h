// A small group for the receive-path fuzzer: 2-3 members and one attacker
// port on the in-process fabric, driven by hand in virtual time (as
// tests/engine/node_harness.h does for the engine tests). What it adds: the
// mempools are made once per process (a fuzzer runs thousands of inputs a
// second) and teardown() takes the members and the fabric down and then
// reports any pool that did not get all its buffers back - an mbuf leak,
// caught at the input that caused it.
#pragma once

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "drivers/fabric/fabric.h"
#include "engine/node.h"

namespace lanecast::fuzz {

struct GroupPools {
  rte_mempool* payload = nullptr;  // the members' segment buffers
  rte_mempool* header = nullptr;   // the members' header and ack frames, the switch's replicas
  rte_mempool* inject = nullptr;   // headers of the frames the fuzzer sends (heap_frame.h)

  static GroupPools make(uint32_t buffers) {
    GroupPools p;
    p.payload = rte_pktmbuf_pool_create("fz_payload", buffers, 0, 0, RTE_PKTMBUF_HEADROOM + 2048, SOCKET_ID_ANY);
    p.header = rte_pktmbuf_pool_create("fz_header", buffers, 0, 0, RTE_PKTMBUF_HEADROOM + 128, SOCKET_ID_ANY);
    p.inject = rte_pktmbuf_pool_create("fz_inject", buffers, 0, 0, 0, SOCKET_ID_ANY);
    if (!p.payload || !p.header || !p.inject) throw std::runtime_error("fuzz group: no mempools");
    return p;
  }
};

class FuzzGroup {
 public:
  FuzzGroup(uint32_t members, uint16_t lanes, const engine::NodeConfig& cfg, const GroupPools& pools)
      : pools_(pools) {
    drivers::Fabric::Options fo;
    fo.nodes = members + 1;  // the last port is the attacker's
    fo.lanes = lanes;
    fo.max_frame_bytes = 2000;
    fo.ring_size = 256;
    fo.queue_frames = 256;
    fo.pool = pools.header;
    fabric_ = std::make_unique<drivers::Fabric>(fo);
    std::vector<drivers::PeerAddress> addrs;
    for (uint32_t r = 0; r < members; ++r) addrs.push_back(fabric_->address(r));
    for (uint32_t r = 0; r < members; ++r) {
      engine::NodeConfig nc = cfg;
      nc.rank = r;
      nc.nodes = members;
      nc.lanes = lanes;
      nodes_.push_back(std::make_unique<engine::Node>(nc, fabric_->port(r), engine::Pools{pools.payload, pools.header},
                                                      addrs));
    }
  }

  uint32_t members() const { return static_cast<uint32_t>(nodes_.size()); }
  uint32_t attacker() const { return members(); }
  engine::Node& node(uint32_t r) { return *nodes_.at(r); }
  drivers::Fabric& fabric() { return *fabric_; }
  uint64_t now() const { return now_; }

  // One round: time advances, the switch moves frames, every member polls.
  void step(uint64_t advance_ns) {
    now_ += advance_ns;
    fabric_->poll(now_);
    for (auto& n : nodes_) n->poll(now_);
  }
  // Time passes with nothing polled (every core stalled).
  void wait(uint64_t ns) { now_ += ns; }

  bool all_ready(uint32_t op) {
    for (auto& n : nodes_)
      if (!n->completions().ready(op)) return false;
    return true;
  }

  // Members first (they hold frames), then the fabric (it holds the rest).
  // Returns "" when every pool has all its buffers back, else which did not.
  std::string teardown() {
    nodes_.clear();
    fabric_.reset();
    std::string leaks;
    for (rte_mempool* p : {pools_.payload, pools_.header, pools_.inject})
      if (const unsigned n = rte_mempool_in_use_count(p); n != 0)
        leaks += std::string(leaks.empty() ? "" : ", ") + p->name + " " + std::to_string(n);
    return leaks;
  }

 private:
  GroupPools pools_;
  std::unique_ptr<drivers::Fabric> fabric_;
  std::vector<std::unique_ptr<engine::Node>> nodes_;
  uint64_t now_ = 1'000'000;
};

}  // namespace lanecast::fuzz
