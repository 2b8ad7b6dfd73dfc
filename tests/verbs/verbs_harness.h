// Members on verbs ports over the UD model (tests/verbs/ud_model.h), driven
// by hand in virtual time like tests/engine/node_harness.h: one adapter per
// member, one VerbsPort each, the engine's Node on top. The model delivers
// each datagram inside the sender's post_send, so a step is every member
// polling once. Proves the driver's logic and the engine over it against a
// model of UD semantics - not that anything works on an adapter.
#pragma once

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "drivers/verbs/verbs_port.h"
#include "drivers/port.h"
#include "engine/node/node.h"
#include "tests/engine/eal_env.h"
#include "tests/engine/node_harness.h"
#include "tests/verbs/ud_model.h"

namespace lanecast::test {

class VerbsHarness {
 public:
  struct Options {
    uint32_t nodes = 4;
    uint16_t lanes = 1;
    engine::NodeConfig node;  // rank, nodes, lanes filled in
    drivers::verbs::model::UdModel::Options model;
    drivers::verbs::model::PortSpec port_spec{};
    uint32_t rq_depth = 256, sq_depth = 256;
    uint32_t rx_buffers = 2047;  // per member's receive pool
    uint32_t payload_buffers = 8191, header_buffers = 8191;
    // Wraps a member's port (a decorator that observes or attacks); nullptr: as it is.
    std::function<std::unique_ptr<drivers::Port>(uint32_t rank, drivers::Port& inner,
                                                 const std::vector<drivers::PeerAddress>& members)>
        wrap;
  };

  explicit VerbsHarness(const Options& o) : o_(o) {
    start_eal();
    const std::string tag = "vh" + std::to_string(instances()++);
    model_ = std::make_unique<drivers::verbs::model::UdModel>(o.model);
    payload_ = pool(tag + "p", o.payload_buffers, 2048);
    header_ = pool(tag + "h", o.header_buffers, 192);
    for (uint32_t r = 0; r < o.nodes; ++r) {
      const std::string dev = model_->add_device(o.port_spec);
      rx_.push_back(pool(tag + "r" + std::to_string(r), o.rx_buffers, 2048 + drivers::verbs::kGrhBytes));
      drivers::verbs::VerbsPort::Options po;
      po.device = dev;
      po.lanes = o.lanes;
      po.rx_pool = rx_.back();
      po.calls = &model_->calls();
      po.rq_depth = o.rq_depth;
      po.sq_depth = o.sq_depth;
      po.max_datagram = 2048;
      ports_.push_back(std::make_unique<drivers::verbs::VerbsPort>(po));
    }
    std::vector<drivers::PeerAddress> addrs;
    for (auto& p : ports_) addrs.push_back(p->address());
    for (uint32_t r = 0; r < o.nodes; ++r) {
      engine::NodeConfig nc = o.node;
      nc.rank = r;
      nc.nodes = o.nodes;
      nc.lanes = o.lanes;
      drivers::Port* port = ports_[r].get();
      if (o.wrap) {
        if (auto w = o.wrap(r, *port, addrs)) {
          wrapped_.push_back(std::move(w));
          port = wrapped_.back().get();
        }
      }
      nodes_.push_back(std::make_unique<engine::Node>(nc, *port, engine::Pools{payload_, header_}, addrs));
    }
  }

  ~VerbsHarness() {
    nodes_.clear();
    wrapped_.clear();
    ports_.clear();
    model_.reset();
    for (rte_mempool* p : rx_) rte_mempool_free(p);
    rte_mempool_free(payload_);
    rte_mempool_free(header_);
  }

  engine::Node& node(uint32_t r) { return *nodes_.at(r); }
  drivers::verbs::VerbsPort& port(uint32_t r) { return *ports_.at(r); }
  drivers::verbs::model::UdModel& model() { return *model_; }
  uint64_t now() const { return now_; }  // virtual ns: 1 us per step
  rte_mempool* rx_pool(uint32_t r) { return rx_.at(r); }

  void step(uint64_t advance_ns = 1000) {
    now_ += advance_ns;
    ++steps_;
    for (uint32_t r = 0; r < nodes_.size(); ++r)
      if (!(r == paused_ && steps_ >= pause_from_ && steps_ < pause_to_)) nodes_[r]->poll(now_);
  }
  // Member `rank` does not poll in steps [from, to) counted from the first
  // (a core that stalls).
  void pause(uint32_t rank, uint64_t from, uint64_t to) {
    paused_ = rank, pause_from_ = from, pause_to_ = to;
  }

  // The next broadcast on every member, run until all completed or
  // max_steps; each member's record (op 0: not completed).
  std::vector<engine::CompletionRecord> broadcast(algos::Rank root, algos::Algo algo,
                                                  std::vector<std::vector<std::byte>>& bufs,
                                                  uint64_t max_steps = 400'000) {
    return engine::test::run_broadcast(nodes_, next_op_++, root, algo, bufs, max_steps, [&] { step(); });
  }

 private:
  static uint32_t& instances() {
    static uint32_t n = 0;
    return n;
  }
  static rte_mempool* pool(const std::string& name, uint32_t n, uint32_t room) {
    rte_mempool* p = rte_pktmbuf_pool_create(name.c_str(), n, 0, 0, static_cast<uint16_t>(RTE_PKTMBUF_HEADROOM + room),
                                             SOCKET_ID_ANY);
    if (p == nullptr) throw std::runtime_error("verbs harness: no pool " + name);
    return p;
  }
  Options o_;
  std::unique_ptr<drivers::verbs::model::UdModel> model_;
  rte_mempool* payload_ = nullptr;
  rte_mempool* header_ = nullptr;
  std::vector<rte_mempool*> rx_;
  std::vector<std::unique_ptr<drivers::verbs::VerbsPort>> ports_;
  std::vector<std::unique_ptr<drivers::Port>> wrapped_;
  std::vector<std::unique_ptr<engine::Node>> nodes_;
  uint64_t now_ = 1'000'000;
  uint64_t steps_ = 0;
  uint32_t paused_ = UINT32_MAX;
  uint64_t pause_from_ = 0, pause_to_ = 0;
  uint32_t next_op_ = 1;
};

}  // namespace lanecast::test
