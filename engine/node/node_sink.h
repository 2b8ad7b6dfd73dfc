// The machine's view of a node (algos::Actions): its actions become owed
// sends, multicasts, deliveries, a timer on the polling core's clock, and
// signals. Private to the node's files.
#pragma once

#include "engine/node/node.h"

namespace lanecast::engine {

class Node::Sink final : public algos::Actions {
 public:
  Sink(Node& n, uint64_t now) : n_(n), now_(now) {}
  void send(algos::Rank to, algos::SegmentIndex seg, algos::Lane lane) override { n_.owe(to, seg, lane); }
  // A datagram: one frame to the port's group address where the switch copies,
  // one per member otherwise; never acknowledged or sent again.
  void multicast(algos::SegmentIndex seg, algos::Lane lane) override { n_.multicast(seg, lane); }
  void deliver(algos::SegmentIndex seg) override { n_.deliver(seg); }
  // Fires in the first poll() at or after now + after_ns.
  void arm(uint64_t after_ns, uint32_t tag) override {
    n_.arm(after_ns > UINT64_MAX - now_ ? UINT64_MAX - 1 : now_ + after_ns, tag);
  }
  // An owed header-only frame through the reliable channel (wire::kFlagSignal).
  void signal(algos::Rank to, uint32_t tag) override { n_.owe_signal(to, tag); }

 private:
  Node& n_;
  uint64_t now_;  // the time of the event being handled
};

}  // namespace lanecast::engine
