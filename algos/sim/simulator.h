// A discrete-event executor of the broadcast machines on a model network.
//
// The model (docs/algorithms.md, "The network model"): every node has, per lane, a
// full-duplex link to one switch: a tx port and an rx port. A frame carrying b
// payload bytes occupies the sender's tx port for d = (b + overhead_bytes) td +
// overhead_time, reaches the receiver's switch port t0 later (t0 from the topology:
// per pair, overlapping with every other transfer), then crosses the switch
// backplane (if its capacity is bounded) and the receiver's rx port, cut-through:
// each stage serialises frames in arrival order and the frame's last bit leaves a
// stage no earlier than it entered. Uncontended, a frame arrives t0 + d after its
// sender started it: the linear model t = t0 + n td, paid per frame, with t0
// overlapping along a pipeline. The switch buffers without bound (no loss, no
// backpressure): the reliable channel's window is not modelled.
//
// A multicast occupies the sender's tx port once and, per receiver, a copy
// crosses the switch and that receiver's rx port like a frame sent to it alone
// (t0 of the pair); each copy is lost with Network::multicast_loss,
// independently, drawn from a generator seeded with Network::multicast_seed.
// Multicast copies are datagrams: a bounded switch buffer never pauses them.
//
// Process skew: rank r enters the broadcast (its machine's start()) at its
// start time (Network::start_times, or drawn from Network::start_skew). A
// multicast copy that reaches a rank before that is lost, like an InfiniBand
// UD datagram for which no receive is posted yet, and counted apart
// (SimResult::multicast_unposted); it reaches the rank t0 + d after the
// multicast left the root (its uncontended arrival: decided when the switch
// copies it). A reliable frame that arrives early waits for the start (the
// reliable channel would retransmit it), then reaches the machine.
//
// Timers (Actions::arm) fire after exactly their delay of virtual time. A
// signal (Actions::signal) is a header-only frame: it reaches its receiver
// t0 + d0 after it was emitted, d0 the port time of a frame of no payload
// (frame overhead only), and neither waits for nor delays the data frames of
// the ports it crosses (a simplification: control frames are rare and small).
//
// The simulator moves descriptors, never bytes. Time is integer picoseconds, every
// tie is broken by event creation order: runs are deterministic.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "algos/machine.h"
#include "algos/plan.h"
#include "algos/registry.h"
#include "algos/sim/latency_map.h"

namespace lanecast::algos::sim {

// How a tx port picks its next frame among the sends its machine has emitted.
enum class TxOrder : uint8_t {
  // Emission order, one FIFO per port (the default): the machine's order is the
  // schedule, as every closed form of the literature assumes (binomial serves its
  // largest subtree first, linear one receiver after the other).
  Fifo,
  // One frame per destination in turn, like the engine's pump_sends(): fairer to
  // many children, but it reorders what the algorithm asked for.
  RoundRobin,
};

struct Network {
  LatencyMap latency{10 * kPicosPerMicro};  // t0 per pair
  double bytes_per_second = 1.25e9;       // link rate of every port (1/td)
  uint32_t frame_overhead_bytes = 0;      // header bytes added to every frame's payload
  Picos frame_overhead_time = 0;          // fixed port time per frame (tx and rx)
  double port_capacity = 0;               // switch port rate in bytes/s (0: the link rate)
  double switch_capacity = 0;             // switch backplane rate in bytes/s (0: unbounded)
  bool lanes_share_port = false;          // lanes are queues of one NIC: one port per node
  // Frames an rx port's switch queue may hold before senders to it pause, like
  // PFC (0: unbounded, never pause). Frames still on the wire do not count, so
  // the queue overshoots by what is in flight. FIFO tx ports only: a paused
  // port's head-of-line frame blocks the frames behind it.
  uint32_t switch_buffer_frames = 0;
  // A token bucket on every port, as a Linux tbf's burst: up to this many
  // bytes (frames with their overhead) pass at once - a frame then takes
  // only frame_overhead_time on the port - and the rest at the link rate
  // (0, or less than two frames: none, every frame at the link rate). On a
  // shaped testbed the first 10 000 bytes of a burst (tbf's bucket) pass at
  // once on every link.
  uint64_t port_burst_bytes = 0;
  TxOrder tx_order = TxOrder::Fifo;
  // Probability that a multicast copy is lost, per receiver (0..1).
  double multicast_loss = 0;
  uint64_t multicast_seed = 1;
  // Process skew: when each rank enters the broadcast. Either one start time
  // per rank (start_times, p entries), or, when that is empty, every non-root
  // rank's drawn uniformly from [0, start_skew] with a generator seeded with
  // skew_seed (the root starts at 0). 0 and empty: every rank at 0.
  Picos start_skew = 0;
  uint64_t skew_seed = 1;
  std::vector<Picos> start_times;
};

// Each rank's start time on `net` in a group of p with this root (see Network).
// Throws std::invalid_argument when start_times does not have p entries.
std::vector<Picos> start_times(const Network& net, uint32_t p, Rank root);

struct SimOptions {
  // Check every action: sends only of held segments, to valid ranks and lanes;
  // exactly-once delivery (a count and a multiset hash per node). Costs one bit
  // per node and segment.
  bool validate = true;
};

struct SimResult {
  bool complete = false;  // every node done and every non-root node delivered everything
  std::string problem;    // why not, when !complete
  Picos completion = 0;   // last node's finish
  // Per rank. A rank finishes when its machine reports done() and its last frame
  // has left its tx port.
  std::vector<Picos> finish;
  std::vector<Picos> last_receive;       // when each rank's last frame arrived (0: none)
  std::vector<uint64_t> bytes_sent;      // payload bytes, every lane
  std::vector<uint64_t> bytes_received;  // payload bytes, every lane
  std::vector<uint64_t> frames_sent;       // a multicast counts once; signals do not count
  std::vector<uint64_t> multicast_lost;    // per receiver: multicast copies lost (network)
  std::vector<uint64_t> multicast_unposted;  // per receiver: copies that came before its start
  std::vector<Picos> start;              // per rank: when its machine started
  uint64_t signals = 0;                  // signal() calls, every rank
  uint64_t timers = 0;                   // timers fired, every rank
  std::vector<uint32_t> peers;           // distinct ranks sent to or received from
                                         // (point-to-point; multicast copies do not count)
  std::vector<uint64_t> lane_bytes_sent;  // rank * lanes + lane
  uint64_t events = 0;                    // processed events (for benchmarks)
};

using MachineFactory = std::function<std::unique_ptr<Machine>(Rank)>;

// Runs one broadcast. Throws std::invalid_argument when the topology does not fit
// the group, std::logic_error when a machine does something impossible (with the
// rank, segment and action in the message).
SimResult simulate(const Plan& plan, const MachineFactory& make, const Network& net,
                   const SimOptions& opt = {});
SimResult simulate(Algo algo, const Plan& plan, const Network& net, const SimOptions& opt = {});

}  // namespace lanecast::algos::sim
