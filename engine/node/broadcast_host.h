// What the running broadcast (broadcast.h) needs of the node it runs in: a
// segment or signal owed to a peer over its reliable channel, whether the
// channels still owe or await anything of it, and the node told when it
// starts and ends. The node implements it (BroadcastLink, node_links.h).
//
// An abstract class: the broadcast's code stays in its own files. Its calls
// are per segment the machine owes or per broadcast, never per frame
// received; the per-frame calls the other way (the node's receive path
// handing a frame to Broadcast, its transmit path asking for a segment's
// frame) are plain calls on a concrete class, and frames are built through
// FrameBuilder (frame_builder.h), also concrete.
#pragma once

#include <cstdint>

#include "algos/types.h"
#include "engine/runtime/op_error.h"

namespace lanecast::engine {

class BroadcastHost {
 public:
  // A segment owed to `to` on `lane`; a signal owed to `to` on lane 0.
  // False when the owed runs ran out.
  virtual bool owe_segment(algos::Rank to, algos::SegmentIndex seg, algos::Lane lane) = 0;
  virtual bool owe_signal(algos::Rank to, uint32_t tag) = 0;
  // The channels owe nothing of the broadcast (streams' batches aside);
  // with `acked`, nothing of it is unacknowledged either.
  virtual bool channels_done(bool acked) const = 0;
  // A broadcast started (its deadline is `now` + the peer timeout) or
  // ended; `failed`: what the channels owe of it is dropped and what they
  // have in flight abandoned.
  virtual void broadcast_started(uint64_t now) = 0;
  virtual void broadcast_ended(uint64_t now, bool failed) = 0;
  // Its failure broke a fail-stop group: the streams stop too.
  virtual void group_broken(uint64_t now, algos::Rank peer) = 0;

 protected:
  ~BroadcastHost() = default;
};

}  // namespace lanecast::engine
