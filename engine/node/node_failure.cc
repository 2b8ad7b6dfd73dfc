// Node: its side of fail-stop groups (fail_stop.h decides): a failure
// notice heard fails what runs here; the notices due go out as frames on
// lane 0. (A broken group's completions name the verdict's culprit:
// Broadcast::blame_broken.)
#include <rte_mbuf.h>

#include "engine/node/node.h"

namespace lanecast::engine {

void Node::heard_failure(const wire::Parsed& p, uint64_t now) {
  if (!fail_stop_.heard(p.failed, p.src)) return;
  const algos::Rank culprit = fail_stop_.verdict().culprit;
  broadcast_.fail(now, OpError::GroupBroken, culprit);
  streams_.fail(now, OpError::GroupBroken, culprit);
}

void Node::send_notices(uint64_t now) {
  const wire::FailedBody b = fail_stop_.notice();
  const uint32_t frame = frames_.link_bytes() + frames_.failed_header();
  size_t sent = 0;
  for (const algos::Rank to : fail_stop_.due()) {
    if (!tx_lanes_.room(0, frame, now)) break;
    uint8_t* at;
    rte_mbuf* m = frames_.alloc_frame(addrs_[to], frames_.failed_header(), &at);
    if (m == nullptr) break;
    wire::write_failed(at, frames_.origin(), b, frames_.seal_flag());
    tx_lanes_.push(0, m);
    ++sent;
  }
  fail_stop_.told(sent);  // the rest next turn
}

}  // namespace lanecast::engine
