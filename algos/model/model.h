// The model executor: runs the p machines of one broadcast against each other
// in one thread, with random but legal event orders, carrying real bytes, and
// checks every action. Pure (standard library only); used by tests/algos.
//
// Legal orders are those of the engine's reliable channel: every send arrives
// exactly once, in ANY order (also within one link), and a node's start()
// precedes its own on_segment(). Starts interleave with arrivals at random.
// A multicast becomes one in-flight copy per other rank, each an independent
// event; with Options::mcast_loss a copy is lost (never arrives) with that
// probability, per receiver, from its own seeded generator. A multicast copy is
// never required to arrive. A timer (Actions::arm) is an event of its own: the
// model has no time, so it fires at any point after it was armed, before or
// after anything else in flight; a signal (Actions::signal) is an event like a
// send, and arrives after its receiver's start().
//
// Checked, reported in Result::error (never asserted):
//  - a send of a segment the sender does not hold (the root holds all, the others
//    what has arrived), to itself, to a rank outside the group, on a lane the
//    plan lacks, of a segment index outside the message; the same segment sent
//    twice to the same rank (unless allowed); the same for multicasts (the same
//    segment multicast twice by one sender);
//  - a deliver of a segment never received, twice, out of range, or by the root;
//  - a timer armed while one is pending, or pending while the machine reports
//    done(); a signal to itself or to a rank outside the group;
//  - an action emitted, or done() turning false, once a machine reported done();
//  - at quiescence (no send in flight): every machine done(); every non-root
//    rank delivered every segment exactly once and its delivered bytes equal the
//    root's; every send and signal arrived (and every multicast copy not lost);
//  - a bound on steps, so that a livelocked machine fails instead of hanging.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "algos/machine.h"
#include "algos/plan.h"
#include "algos/registry.h"

namespace lanecast::algos::model {

// Which in-flight send arrives next.
enum class Order : uint8_t {
  Random,  // uniformly among all sends in flight (the default)
  Fifo,    // oldest first: everything in emission order
  Lifo,    // newest first: the most reordered legal schedule
};

struct Options {
  uint64_t seed = 1;             // event order and the root's byte pattern
  Order order = Order::Random;   // Fifo/Lifo still interleave starts at random
  uint64_t max_steps = 0;        // 0: 3p + p * p * max(segments, 1) + 64
  bool allow_duplicate_sends = false;  // same (sender, receiver, segment) twice
  // Probability that a multicast copy is lost, independently per receiver
  // (0..1; 1 loses every copy). Drawn from a generator seeded by seed and
  // mcast_seed, apart from the event order's.
  double mcast_loss = 0;
  uint64_t mcast_seed = 0;
};

struct NodeStats {
  uint64_t bytes_sent = 0;        // payload bytes, every lane
  uint64_t bytes_received = 0;    // payload bytes, duplicates included
  uint64_t segments_sent = 0;
  uint64_t segments_received = 0;
  uint64_t duplicates_received = 0;  // arrivals of a segment already held
  uint64_t multicasts_sent = 0;      // multicast() calls (counted once in bytes_sent)
  uint64_t signals_sent = 0;         // signal() calls
  uint64_t multicast_received = 0;   // multicast copies that arrived (in segments_received)
  uint64_t multicast_lost = 0;       // multicast copies to this rank that were lost
  uint32_t peers_sent_to = 0;        // distinct ranks, point-to-point sends only
  uint32_t peers_received_from = 0;
  uint32_t peers = 0;                // distinct ranks sent to or received from (multicast
                                     // copies do not count: they reach every rank)
  std::vector<uint64_t> lane_bytes_sent;  // per lane of the plan
};

struct Result {
  bool ok = false;
  std::string error;     // empty when ok; else what went wrong, with step and ranks
  uint64_t seed = 0;     // the seed the run used
  uint64_t steps = 0;    // starts + arrivals processed
  uint64_t sends = 0;    // sends emitted by every machine
  uint64_t multicasts = 0;        // multicasts emitted by every machine
  uint64_t multicast_copies = 0;  // copies those made (p-1 each), lost ones included
  uint64_t multicast_lost = 0;    // copies lost
  uint64_t arms = 0;     // timers armed
  uint64_t timers = 0;   // timers fired
  uint64_t signals = 0;  // signals emitted (each arrives once)
  std::vector<NodeStats> nodes;  // per real rank
};

using MachineFactory = std::function<std::unique_ptr<Machine>(Rank)>;

// Runs one broadcast of `plan` with the machines `make` builds (one per rank).
Result run(const Plan& plan, const MachineFactory& make, const Options& opt = {});
// The same with the registered algorithm `algo`.
Result run(Algo algo, const Plan& plan, const Options& opt = {});

}  // namespace lanecast::algos::model
