// The in-process fabric: N nodes, each with one DPDK ring port of L queues,
// joined by an emulated store-and-forward switch. Each link has a rate, a
// one-way latency and an optional random loss (seeded); each switch output has
// a bounded buffer, so an overloaded link drops like a real one.
//
// Time is an argument: poll(now) moves frames and is called by exactly one
// polling core; the ring ports themselves are driven by the nodes' cores.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "drivers/dpdk/dpdk_port.h"
#include "drivers/port.h"

struct rte_ring;
struct rte_mbuf;
struct rte_mempool;

namespace lanecast::drivers {

class Fabric {
 public:
  struct Options {
    uint32_t nodes = 2;
    uint16_t lanes = 1;
    double rate_mbit = 0;            // per link; 0 = unlimited
    uint64_t latency_ns = 0;         // one way
    double loss = 0;                 // random loss per frame, [0, 1)
    uint64_t seed = 1;
    uint32_t queue_frames = 4096;    // switch buffer per output link (node, lane)
    uint32_t ring_size = 1024;       // each port queue's ring
    uint32_t max_frame_bytes = 1514;
    rte_mempool* pool = nullptr;     // for replicas of group-addressed frames
  };
  struct Counters {
    uint64_t switched = 0;            // frames delivered to a receiver's ring
    uint64_t bytes = 0;
    uint64_t lost = 0;                // random loss
    uint64_t queue_drops = 0;         // output buffer full
    uint64_t unknown_destination = 0;
    uint64_t replicated = 0;          // extra copies made for group addresses
  };

  explicit Fabric(const Options& o);
  ~Fabric();
  Fabric(const Fabric&) = delete;
  Fabric& operator=(const Fabric&) = delete;

  Port& port(uint32_t node) { return *ports_.at(node); }
  PeerAddress address(uint32_t node) const;
  uint32_t nodes() const { return opts_.nodes; }

  // Moves what the senders queued and delivers what has arrived by `now`.
  uint32_t poll(uint64_t now_ns);
  // 0 if frames wait to be switched, else the next arrival (UINT64_MAX: none).
  uint64_t next_event_ns() const;
  // Written by the polling core; read elsewhere only for reports.
  const Counters& counters() const { return counters_; }

 private:
  struct Pending {
    rte_mbuf* frame;
    uint64_t arrival_ns;
  };
  // One output link's buffer: a fixed ring of frames in arrival order.
  struct DelayLine {
    std::vector<Pending> slots;
    uint32_t head = 0, count = 0;
    uint64_t busy_until = 0;  // the output link serialises at the link rate
  };
  struct Queue {              // one (node, lane)
    rte_ring* rx = nullptr;   // fabric -> node
    rte_ring* tx = nullptr;   // node -> fabric
    uint64_t uplink_busy_until = 0;
    DelayLine out;
  };

  Queue& q(uint32_t node, uint16_t lane) { return queues_[node * opts_.lanes + lane]; }
  const Queue& q(uint32_t node, uint16_t lane) const { return queues_[node * opts_.lanes + lane]; }
  uint64_t serialise_ns(uint32_t bytes) const;
  void forward(rte_mbuf* m, uint32_t src, uint16_t lane, uint64_t t_up);
  void enqueue(rte_mbuf* m, uint32_t dst, uint16_t lane, uint64_t t_up);
  uint32_t deliver(uint32_t node, uint16_t lane, uint64_t now);

  Options opts_;
  std::string tag_;
  std::vector<Queue> queues_;
  std::vector<std::unique_ptr<DpdkPort>> ports_;
  std::mt19937_64 rng_;
  uint64_t loss_threshold_ = 0;  // loss as a fraction of 2^64
  double ns_per_byte_ = 0;
  Counters counters_;
};

}  // namespace lanecast::drivers
