// Nodes on the in-process fabric, driven by hand in virtual time: the
// engine's whole protocol with no polling core, no clock and no thread, so
// tests are deterministic and replayable. One helper for every engine test
// that builds nodes itself (hostile frames, zero copy, retransmissions, ports
// without chains or multicast).
#pragma once

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "drivers/fabric/fabric.h"
#include "drivers/port.h"
#include "engine/node/node.h"
#include "tests/engine/eal_env.h"

namespace lanecast::engine::test {

// Posts broadcast `op` on every node (each into its own buffer of `bufs`,
// the root's holding the message) and calls step() until every node
// completed it or `max_steps` passed; each node's record (op 0: not
// completed). Shared by the harnesses that drive nodes by hand.
template <typename Step>
std::vector<CompletionRecord> run_broadcast(std::vector<std::unique_ptr<Node>>& nodes, uint32_t op, algos::Rank root,
                                            algos::Algo algo, std::vector<std::vector<std::byte>>& bufs,
                                            uint64_t max_steps, Step step) {
  for (uint32_t r = 0; r < nodes.size(); ++r) {
    Submission s;
    s.op = op;
    s.root = root;
    s.algo = algo;
    s.buffer = bufs[r].data();
    s.size = bufs[root].size();
    nodes[r]->submit(s);
  }
  const auto all_ready = [&] {
    for (auto& n : nodes)
      if (!n->completions().ready(op)) return false;
    return true;
  };
  for (uint64_t i = 0; i < max_steps && !all_ready(); ++i) step();
  std::vector<CompletionRecord> out(nodes.size());
  for (uint32_t r = 0; r < nodes.size(); ++r)
    if (nodes[r]->completions().ready(op)) out[r] = nodes[r]->completions().record(op);
  return out;
}

class NodeHarness {
 public:
  struct Options {
    uint32_t nodes = 2;
    uint32_t extra_ports = 0;  // fabric ports with no node: attackers, observers
    NodeConfig node;           // group settings; rank and nodes are filled in
    drivers::Fabric::Options fabric;  // link model; nodes and pool are filled in
    bool pool_per_node = false;       // each node its own payload pool (to see who allocates)
    uint32_t payload_buffers = 8191, header_buffers = 16383;
    uint16_t header_data_room = RTE_PKTMBUF_HEADROOM + 192;  // the header pool's buffers, headroom included
    uint32_t payload_room = 2048;
    // Wraps a node's port (a decorator that observes or restricts it).
    std::function<std::unique_ptr<drivers::Port>(uint32_t rank, drivers::Port& inner)> wrap;  // nullptr: unwrapped
    // Virtual time one node's poll takes: nodes polled one after another as
    // on one shared core, so a node's acks wait while others run.
    uint64_t poll_cost_ns = 0;
  };

  explicit NodeHarness(const Options& o) : o_(o) {
    lanecast::test::start_eal();
    const std::string tag = "nh" + std::to_string(instances()++);
    const uint32_t pools = o.pool_per_node ? o.nodes : 1;
    for (uint32_t i = 0; i < pools; ++i) {
      payload_.push_back(rte_pktmbuf_pool_create((tag + "p" + std::to_string(i)).c_str(), o.payload_buffers, 0, 0,
                                                 static_cast<uint16_t>(RTE_PKTMBUF_HEADROOM + o.payload_room),
                                                 SOCKET_ID_ANY));
      if (payload_.back() == nullptr) throw std::runtime_error("harness: no payload pool");
    }
    header_ = rte_pktmbuf_pool_create((tag + "h").c_str(), o.header_buffers, 0, 0, o.header_data_room,
                                      SOCKET_ID_ANY);
    if (header_ == nullptr) throw std::runtime_error("harness: no header pool");
    drivers::Fabric::Options fo = o.fabric;
    fo.nodes = o.nodes + o.extra_ports;
    fo.pool = header_;
    fabric_ = std::make_unique<drivers::Fabric>(fo);
    std::vector<drivers::PeerAddress> addrs;
    for (uint32_t r = 0; r < o.nodes; ++r) addrs.push_back(fabric_->address(r));
    for (uint32_t r = 0; r < o.nodes; ++r) {
      drivers::Port* port = &fabric_->port(r);
      if (o.wrap) {
        if (auto w = o.wrap(r, *port)) {  // nullptr: this member's port as it is
          wrapped_.push_back(std::move(w));
          port = wrapped_.back().get();
        }
      }
      ports_.push_back(port);
      NodeConfig nc = o.node;
      nc.rank = r;
      nc.nodes = o.nodes;
      nodes_.push_back(std::make_unique<Node>(nc, *port, Pools{payload_pool(r), header_}, addrs));
    }
  }

  ~NodeHarness() {
    nodes_.clear();
    wrapped_.clear();
    fabric_.reset();
    for (rte_mempool* p : payload_) rte_mempool_free(p);
    rte_mempool_free(header_);
  }

  Node& node(uint32_t r) { return *nodes_.at(r); }
  drivers::Fabric& fabric() { return *fabric_; }
  drivers::Port& port(uint32_t r) { return *ports_.at(r); }
  rte_mempool* payload_pool(uint32_t r) const { return payload_[o_.pool_per_node ? r : 0]; }
  rte_mempool* header_pool() const { return header_; }
  uint64_t now() const { return now_; }

  // One round: time advances, the switch moves frames, every node polls.
  void step(uint64_t advance_ns = 1000) {
    now_ += advance_ns;
    fabric_->poll(now_);
    for (auto& n : nodes_) {
      n->poll(now_);
      now_ += o_.poll_cost_ns;
    }
  }
  void run(uint64_t steps, uint64_t advance_ns = 1000) {
    for (uint64_t i = 0; i < steps; ++i) step(advance_ns);
  }
  // Moves virtual time without polling anything (every core paused).
  void advance(uint64_t ns) { now_ += ns; }

  // Posts the next broadcast on every member and runs until all completed or
  // `max_steps` passed; returns each member's outcome (op 0: not completed).
  std::vector<CompletionRecord> broadcast(algos::Rank root, algos::Algo algo, std::vector<std::vector<std::byte>>& bufs,
                                          uint64_t max_steps = 400'000, uint64_t advance_ns = 1000) {
    return run_broadcast(nodes_, next_op_++, root, algo, bufs, max_steps, [&] { step(advance_ns); });
  }
  uint32_t next_op() const { return next_op_; }
  void skip_op() { ++next_op_; }

 private:
  static uint32_t& instances() {
    static uint32_t n = 0;
    return n;
  }
  Options o_;
  std::vector<rte_mempool*> payload_;
  rte_mempool* header_ = nullptr;
  std::unique_ptr<drivers::Fabric> fabric_;
  std::vector<std::unique_ptr<drivers::Port>> wrapped_;
  std::vector<drivers::Port*> ports_;
  std::vector<std::unique_ptr<Node>> nodes_;
  uint64_t now_ = 1'000'000;
  uint32_t next_op_ = 1;
};

// Every member's bytes equal the root's.
inline bool all_equal(const std::vector<std::vector<std::byte>>& bufs, algos::Rank root) {
  for (const auto& b : bufs)
    if (b != bufs[root]) return false;
  return true;
}

}  // namespace lanecast::engine::test
