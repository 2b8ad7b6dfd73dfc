// Node: fail-stop groups (NodeConfig::fail_stop). Members are processes; one
// that stops answering is gone for this epoch. The first member to fail a
// broadcast marks the group broken and tells every other member, each of
// which does the same (a flood: one notice per member and peer, plus one
// reply a millisecond to a peer that still sends). A broken member fails its
// running broadcast and every later one at once, naming the lost rank and
// who saw it go; the application re-forms the group (a new epoch).
#include <rte_mbuf.h>

#include "engine/node/node.h"

namespace lanecast::engine {

void Node::mark_broken(uint32_t op, OpError err, algos::Rank culprit, algos::Rank reporter) {
  broken_ = Broken{true, op, err, culprit, reporter};
  for (algos::Rank r = 0; r < cfg_.nodes; ++r)
    if (r != cfg_.rank && r != culprit) notices_.push_back(r);
}

void Node::handle_failed(const wire::Parsed& p, uint64_t now) {
  counters_.rx_failure_notices.add();
  if (!cfg_.fail_stop || broken_.yes) return;
  const wire::FailedBody& f = p.failed;
  const algos::Rank culprit = f.culprit < cfg_.nodes ? f.culprit : algos::kNoRank;
  const algos::Rank reporter = f.reporter < cfg_.nodes ? f.reporter : p.src;
  const OpError err = f.error <= static_cast<uint8_t>(OpError::GroupBroken) ? static_cast<OpError>(f.error)
                                                                           : OpError::Internal;
  mark_broken(f.op, err, culprit, reporter);
  if (op_.active) finish(now, OpError::GroupBroken, culprit);
  fail_streams(now, OpError::GroupBroken, culprit);
}

// A reply to a peer that sent something after the group broke: it has not
// heard yet (or its notice was lost). At most one a millisecond per peer.
void Node::notify(algos::Rank peer, uint64_t now) {
  if (!cfg_.fail_stop || peer >= cfg_.nodes || now < last_notice_ns_[peer] + 1'000'000) return;
  if (notices_.size() >= cfg_.nodes) return;  // bounded (reserved): a full queue tells soon enough
  last_notice_ns_[peer] = now;
  notices_.push_back(peer);
}

void Node::send_notices(uint64_t now) {
  wire::FailedBody b{};
  b.op = broken_.op;
  b.culprit = broken_.culprit;
  b.reporter = broken_.reporter;
  b.error = static_cast<uint8_t>(broken_.error);
  const uint32_t frame = link_bytes_ + hdr_failed_;
  size_t i = 0;
  for (; i < notices_.size(); ++i) {
    if (!room(0, frame, now)) break;
    uint8_t* at;
    rte_mbuf* m = alloc_frame(addrs_[notices_[i]], hdr_failed_, &at);
    if (m == nullptr) break;
    wire::write_failed(at, origin(), b, seal_flag_);
    tx_push(0, m);
    counters_.tx_failure_notices.add();
  }
  notices_.erase(notices_.begin(), notices_.begin() + static_cast<long>(i));  // the rest next turn
}

}  // namespace lanecast::engine
