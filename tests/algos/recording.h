// A sink that records a machine's actions, for hand-driven machine tests.
#pragma once

#include <cstdint>
#include <ostream>
#include <utility>
#include <vector>

#include "algos/machine.h"

namespace lanecast::algos::testing {

struct Act {
  enum Kind { Send, Deliver, Multicast, Arm, Signal } kind;
  Rank to;  // kNoRank for Deliver, Multicast and Arm
  SegmentIndex seg;  // the tag of Arm and Signal
  Lane lane;
  uint64_t after_ns = 0;  // Arm
  bool operator==(const Act&) const = default;
};

inline Act send(Rank to, SegmentIndex seg, Lane lane = 0) { return {Act::Send, to, seg, lane}; }
inline Act deliver(SegmentIndex seg) { return {Act::Deliver, kNoRank, seg, 0}; }
inline Act multicast(SegmentIndex seg, Lane lane = 0) { return {Act::Multicast, kNoRank, seg, lane}; }
inline Act arm(uint64_t after_ns, uint32_t tag) { return {Act::Arm, kNoRank, tag, 0, after_ns}; }
inline Act signal(Rank to, uint32_t tag) { return {Act::Signal, to, tag, 0}; }

inline std::ostream& operator<<(std::ostream& o, const Act& a) {
  if (a.kind == Act::Deliver) return o << "deliver(" << a.seg << ")";
  if (a.kind == Act::Multicast) return o << "multicast(seg " << a.seg << ", lane " << a.lane << ")";
  if (a.kind == Act::Arm) return o << "arm(" << a.after_ns << " ns, tag " << a.seg << ")";
  if (a.kind == Act::Signal) return o << "signal(to " << a.to << ", tag " << a.seg << ")";
  return o << "send(to " << a.to << ", seg " << a.seg << ", lane " << a.lane << ")";
}

class Recorder final : public Actions {
 public:
  void send(Rank to, SegmentIndex seg, Lane lane) override {
    acts.push_back({Act::Send, to, seg, lane});
  }
  void multicast(SegmentIndex seg, Lane lane) override {
    acts.push_back({Act::Multicast, kNoRank, seg, lane});
  }
  void deliver(SegmentIndex seg) override { acts.push_back({Act::Deliver, kNoRank, seg, 0}); }
  void arm(uint64_t after_ns, uint32_t tag) override { acts.push_back(testing::arm(after_ns, tag)); }
  void signal(Rank to, uint32_t tag) override { acts.push_back(testing::signal(to, tag)); }
  // The actions recorded so far; clears the record.
  std::vector<Act> take() { return std::exchange(acts, {}); }

  std::vector<Act> acts;
};

}  // namespace lanecast::algos::testing
