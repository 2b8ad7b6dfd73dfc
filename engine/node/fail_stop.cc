#include "engine/node/fail_stop.h"

namespace lanecast::engine {

namespace {
constexpr uint64_t kReplyEveryNs = 1'000'000;  // replies to one peer that still sends
}  // namespace

FailStop::FailStop(bool enabled, uint32_t nodes, algos::Rank me, Counters& counters)
    : enabled_(enabled), nodes_(nodes), me_(me), counters_(counters) {
  if (enabled_) {
    last_reply_ns_.assign(nodes, 0);
    due_.reserve(nodes);  // never grows on the polling core
  }
}

void FailStop::mark(uint32_t op, OpError err, algos::Rank culprit, algos::Rank reporter) {
  verdict_ = Verdict{true, op, err, culprit, reporter};
  due_.clear();
  for (algos::Rank r = 0; r < nodes_; ++r)
    if (r != me_ && r != culprit) due_.push_back(r);
}

bool FailStop::saw(uint32_t op, OpError err, algos::Rank culprit) {
  if (!enabled_ || verdict_.broken || err == OpError::None) return false;
  mark(op, err, culprit, me_);
  return true;
}

bool FailStop::heard(const wire::FailedBody& f, algos::Rank src) {
  counters_.rx_notices.add();
  if (!enabled_ || verdict_.broken) return false;
  // A notice's fields come from the wire: out of range, they name nobody.
  const algos::Rank culprit = f.culprit < nodes_ ? f.culprit : algos::kNoRank;
  const algos::Rank reporter = f.reporter < nodes_ ? f.reporter : src;
  const OpError err = f.error <= static_cast<uint8_t>(OpError::GroupBroken) ? static_cast<OpError>(f.error)
                                                                           : OpError::Internal;
  mark(f.op, err, culprit, reporter);
  return true;
}

void FailStop::sent_after_broken(algos::Rank peer, uint64_t now) {
  counters_.rx_after_broken.add();
  if (!enabled_ || peer >= nodes_ || now < last_reply_ns_[peer] + kReplyEveryNs) return;
  if (due_.size() >= nodes_) return;  // bounded (reserved): a full queue tells soon enough
  last_reply_ns_[peer] = now;
  due_.push_back(peer);
}

wire::FailedBody FailStop::notice() const {
  wire::FailedBody b{};
  b.op = verdict_.op;
  b.culprit = verdict_.culprit;
  b.reporter = verdict_.reporter;
  b.error = static_cast<uint8_t>(verdict_.error);
  return b;
}

void FailStop::told(size_t n) {
  counters_.tx_notices.add(n);
  due_.erase(due_.begin(), due_.begin() + static_cast<long>(n));  // the rest next turn
}

}  // namespace lanecast::engine
