// Node: its side of fail-stop groups (fail_stop.h decides): a failure
// notice heard fails what runs here; a broken group's completions name the
// verdict's culprit; the notices due go out as frames on lane 0.
#include <rte_mbuf.h>

#include "engine/node/node.h"

namespace lanecast::engine {

void Node::heard_failure(const wire::Parsed& p, uint64_t now) {
  if (!fail_stop_.heard(p.failed, p.src)) return;
  const algos::Rank culprit = fail_stop_.verdict().culprit;
  if (op_.active) finish(now, OpError::GroupBroken, culprit);
  streams_.fail(now, OpError::GroupBroken, culprit);
}

void Node::blame_broken(CompletionRecord& rec) const {
  const FailStop::Verdict& v = fail_stop_.verdict();
  rec.peer = v.culprit;
  rec.reporter = v.reporter;
  rec.broken_op = v.op;
}

void Node::send_notices(uint64_t now) {
  const wire::FailedBody b = fail_stop_.notice();
  const uint32_t frame = link_bytes_ + hdr_failed_;
  size_t sent = 0;
  for (const algos::Rank to : fail_stop_.due()) {
    if (!tx_lanes_.room(0, frame, now)) break;
    uint8_t* at;
    rte_mbuf* m = alloc_frame(addrs_[to], hdr_failed_, &at);
    if (m == nullptr) break;
    wire::write_failed(at, origin(), b, seal_flag_);
    tx_lanes_.push(0, m);
    ++sent;
  }
  fail_stop_.told(sent);  // the rest next turn
}

}  // namespace lanecast::engine
