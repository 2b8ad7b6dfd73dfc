// Fail-stop groups (NodeConfig::fail_stop), the part of a node that owns
// them. Members are processes; one that stops answering is gone for this
// epoch. The first member to fail a broadcast marks the group broken and
// tells every other member, each of which does the same (a flood: one
// notice per member and peer, plus one reply a millisecond to a peer that
// still sends). A broken member fails its running broadcast and every later
// one at once, naming the lost rank and who saw it go; the application
// re-forms the group (a new epoch).
//
// It decides, the node acts: the node asks it whether the group is broken,
// tells it what it saw and heard, and sends the notices it says are due
// (the frames are the node's transport's). Its counters are its own slice
// of the node's.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "algos/machine.h"
#include "engine/node/op_types.h"
#include "engine/runtime/counter.h"
#include "engine/wire/wire.h"

namespace lanecast::engine {

class FailStop {
 public:
  struct Counters {
    Counter rx_notices;       // another member says the group lost a member
    Counter rx_after_broken;  // frames of a broken group's broadcasts, dropped (the sender is told)
    Counter tx_notices;
  };
  // Why the group broke: during which broadcast, the error, whom it blames
  // and who saw it.
  struct Verdict {
    bool broken = false;
    uint32_t op = 0;
    OpError error = OpError::None;
    algos::Rank culprit = algos::kNoRank;
    algos::Rank reporter = algos::kNoRank;
  };

  // `enabled` false: a group whose failures end a broadcast, not the group;
  // nothing here ever breaks and no notice is sent.
  FailStop(bool enabled, uint32_t nodes, algos::Rank me, Counters& counters);

  bool enabled() const { return enabled_; }
  bool broken() const { return verdict_.broken; }
  const Verdict& verdict() const { return verdict_; }

  // This member saw the group break (a broadcast failed here): every other
  // member but the culprit is to be told. True when this broke the group
  // (a fail-stop group, not broken before, an error); later calls change nothing.
  bool saw(uint32_t op, OpError err, algos::Rank culprit);
  // A notice from `src`: true when it breaks the group here (the first news
  // of it, in a fail-stop group) - the node then fails what runs.
  bool heard(const wire::FailedBody& f, algos::Rank src);
  // A frame from `peer` after the group broke: it has not heard (or its
  // notice was lost); it is told again, at most once a millisecond. The
  // frame is dropped and counted.
  void sent_after_broken(algos::Rank peer, uint64_t now);

  // The notices due, in order, and the body each carries; the node sends
  // what its transport has room for and says how many went.
  std::span<const algos::Rank> due() const { return due_; }
  wire::FailedBody notice() const;
  void told(size_t n);

 private:
  void mark(uint32_t op, OpError err, algos::Rank culprit, algos::Rank reporter);

  bool enabled_;
  uint32_t nodes_;
  algos::Rank me_;
  Counters& counters_;
  Verdict verdict_;
  std::vector<algos::Rank> due_;           // peers still to tell (a queue, at most one per member)
  std::vector<uint64_t> last_reply_ns_;    // per rank: replies to a peer that did not hear
};

}  // namespace lanecast::engine
