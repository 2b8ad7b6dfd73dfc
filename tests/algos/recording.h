// A sink that records a machine's actions, for hand-driven machine tests.
#pragma once

#include <ostream>
#include <utility>
#include <vector>

#include "algos/machine.h"

namespace lanecast::algos::testing {

struct Act {
  enum Kind { Send, Deliver, Multicast } kind;
  Rank to;  // kNoRank for Deliver and Multicast
  SegmentIndex seg;
  Lane lane;
  bool operator==(const Act&) const = default;
};

inline Act send(Rank to, SegmentIndex seg, Lane lane = 0) { return {Act::Send, to, seg, lane}; }
inline Act deliver(SegmentIndex seg) { return {Act::Deliver, kNoRank, seg, 0}; }
inline Act multicast(SegmentIndex seg, Lane lane = 0) { return {Act::Multicast, kNoRank, seg, lane}; }

inline std::ostream& operator<<(std::ostream& o, const Act& a) {
  if (a.kind == Act::Deliver) return o << "deliver(" << a.seg << ")";
  if (a.kind == Act::Multicast) return o << "multicast(seg " << a.seg << ", lane " << a.lane << ")";
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
  // The actions recorded so far; clears the record.
  std::vector<Act> take() { return std::exchange(acts, {}); }

  std::vector<Act> acts;
};

}  // namespace lanecast::algos::testing
