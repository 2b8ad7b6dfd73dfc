// The in-process fabric: N nodes, each with one ring port of L lanes (a pair
// of DPDK rings per lane, drivers/ring/ring_port.h: no ethdev, so no limit of
// 32 members), joined by an emulated store-and-forward switch. The engine
// drives the ring ports; this class plays the wires and the switch.
//
//   node n, lane l:  tx_burst -> tx ring --poll()--> switch --> delay line --> rx ring -> rx_burst
//
// Switching. Lanes are parallel planes (rails): lane l of every node hangs off
// plane l of the switch, so a frame sent on lane l arrives on lane l. The
// destination node comes from the destination MAC, node_mac(node, *); an
// unknown MAC is dropped and counted; a group MAC (I/G bit) is copied to every
// other node's lane l whose port joined it (RingPort::join_group; the
// broadcast address reaches all), each receiver getting its own header
// buffer (the payload buffer is shared by refcount: Fabric::replicate). A real switch floods
// and the NIC filters; here the switch does both, and counts the copies a
// port's filter would have refused (not_joined).
//
// Link model, per link: rate (Mbit/s, 0 = unlimited; preamble, FCS and gap
// counted), one-way latency (uniform, or per (source, destination) pair from a
// latency matrix), random loss (seeded std::mt19937_64, drawn per delivered
// copy). Store and forward: the sender's uplink serialises, then the
// receiver's downlink serialises, then latency; arrival = downlink done +
// latency. Each output link (node, lane) holds at most queue_frames frames,
// waiting or in flight (size it above the bandwidth-delay product); beyond
// that, frames are dropped and counted, like a switch buffer. A full rx ring
// (a receiver that does not poll) keeps frames in the output link for the next
// poll, so a stalled receiver fills its switch buffer and drops there.
//
// Time is an argument: poll(now) is called by exactly one polling core; the
// ring ports are driven by the nodes' cores. poll() does not allocate on the
// heap or lock (replicas come from the mempool); it makes a system call only
// to wake a member's core that sleeps (drivers/wake.h). With a latency matrix,
// an output link still delivers in order: a frame from a near source queued
// behind one from a far source waits for it (arrival = max(its own, the
// previous frame's)), as on a link that serialises.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "drivers/port.h"
#include "drivers/ring/ring_port.h"

struct rte_ring;
struct rte_mbuf;
struct rte_mempool;

namespace lanecast::drivers {

class Fabric {
 public:
  struct Options {
    uint32_t nodes = 2;                // 1..65536
    uint16_t lanes = 1;                // 1..16 (ring PMD queues)
    double rate_mbit = 0;              // per link; 0 = unlimited
    uint64_t latency_ns = 0;           // one way
    // One-way latency per (source, destination), row-major nodes x nodes, in
    // ns; replaces latency_ns when not empty.
    std::vector<uint64_t> latency_matrix_ns;
    double loss = 0;                   // random loss per frame, [0, 1)
    uint64_t seed = 1;
    uint32_t queue_frames = 4096;      // switch buffer per output link (node, lane)
    uint32_t ring_size = 1024;         // each port queue's rx and tx ring; power of two
    uint32_t max_frame_bytes = 1514;   // link header included, FCS not; longer frames dropped
    rte_mempool* pool = nullptr;       // mbuf headers of replicas (multicast copies)
  };
  struct Counters {
    uint64_t switched = 0;             // frames delivered into a receiver's rx ring
    uint64_t bytes = 0;                // their bytes (pkt_len)
    uint64_t lost = 0;                 // random loss
    uint64_t queue_drops = 0;          // output link buffer full
    uint64_t unknown_destination = 0;  // unicast MAC naming no node
    uint64_t replicated = 0;           // extra copies made for group addresses
    uint64_t not_joined = 0;           // group frame not copied to a port that had not joined it
    uint64_t malformed = 0;            // shorter than a MAC header, or above max_frame_bytes
    uint64_t pool_drops = 0;           // replica not made: mempool empty
    uint64_t deepest_queue = 0;        // most frames one output link held at once
  };

  // Throws std::invalid_argument for bad options, std::runtime_error when DPDK
  // refuses (rings, ports); nothing is left behind on failure.
  explicit Fabric(const Options& o);
  // Stops and removes the ports, frees every frame still held, frees the rings.
  ~Fabric();
  Fabric(const Fabric&) = delete;
  Fabric& operator=(const Fabric&) = delete;

  RingPort& port(uint32_t node) { return *ports_.at(node); }
  PeerAddress address(uint32_t node) const;
  uint32_t nodes() const { return opts_.nodes; }
  uint16_t lanes() const { return opts_.lanes; }
  const Options& options() const { return opts_; }

  // Takes what the senders queued (bursts of 32, as fast as their uplinks
  // allow) and delivers what has arrived by `now`. Returns frames moved plus
  // frames delivered (0: nothing happened). One core only.
  uint32_t poll(uint64_t now_ns);
  // When poll() next has work: the earliest pending arrival, or a sender's
  // uplink free time when its tx ring holds frames (either may be in the
  // past: poll now); UINT64_MAX when nothing is pending. Same core as poll().
  uint64_t next_event_ns() const;
  // A snapshot; safe from any thread (single-writer relaxed atomics).
  Counters counters() const;
  // Frames the output link towards (node, lane) holds now. Same core as poll().
  uint32_t queued(uint32_t node, uint16_t lane) { return q(node, lane).out.count; }
  // The waker of the core that runs poll(): members' transmits wake it.
  // Control path only (cores parked).
  void set_waker(Waker* w);

 private:
  struct Pending {
    rte_mbuf* frame;
    uint64_t arrival_ns;
  };
  // One output link: a fixed ring of frames in arrival order.
  struct DelayLine {
    std::vector<Pending> slots;
    uint32_t head = 0, count = 0;
    uint64_t busy_until = 0;    // the downlink serialises at the link rate
    uint64_t last_arrival = 0;  // frames leave in order
  };
  struct Queue {                // one (node, lane)
    rte_ring* rx = nullptr;     // fabric -> node: the ring port's (SP: fabric, SC: node)
    rte_ring* tx = nullptr;     // node -> fabric (SP: node, SC: fabric)
    uint32_t node = 0;
    uint64_t uplink_busy_until = 0;
    DelayLine out;
  };
  class Count {                 // written by the polling core only
   public:
    void add(uint64_t n = 1) { v_.store(v_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed); }
    uint64_t get() const { return v_.load(std::memory_order_relaxed); }

   private:
    std::atomic<uint64_t> v_{0};
  };

  Queue& q(uint32_t node, uint16_t lane) { return queues_[size_t{node} * opts_.lanes + lane]; }
  uint64_t serialise_ns(uint32_t bytes) const;
  void build();
  void release();
  void forward(rte_mbuf* m, uint32_t src, uint16_t lane, uint64_t t_up);
  bool admit(uint32_t dst, uint16_t lane);
  rte_mbuf* replicate(rte_mbuf* m, uint16_t* shared);
  void push(rte_mbuf* m, uint32_t src, uint32_t dst, uint16_t lane, uint64_t t_up);
  uint64_t latency(uint32_t src, uint32_t dst) const {
    return opts_.latency_matrix_ns.empty() ? opts_.latency_ns
                                           : opts_.latency_matrix_ns[size_t{src} * opts_.nodes + dst];
  }
  uint32_t deliver(Queue& qu, uint64_t now);

  Options opts_;
  std::string tag_;                 // unique per instance: names of rings and ports
  std::vector<Queue> queues_;
  std::vector<std::unique_ptr<RingPort>> ports_;
  std::mt19937_64 rng_;
  uint64_t loss_threshold_ = 0;     // loss as a fraction of 2^64
  double ns_per_byte_ = 0;
  uint32_t replica_room_ = 0;       // bytes a replica's header buffer holds (the pool's data room)
  uint32_t first_ = 0;              // node served first this poll (rotates: no node always wins)
  struct {
    Count switched, bytes, lost, queue_drops, unknown_destination, replicated, not_joined, malformed, pool_drops,
        deepest_queue;
  } c_;
};

}  // namespace lanecast::drivers
