// Member and Completion: the application side of a broadcast.
#include <time.h>

#include <algorithm>
#include <stdexcept>

#include "engine/lanecast.h"
#include "engine/node.h"

namespace lanecast {

Completion Member::broadcast(Rank root, std::span<std::byte> buffer, std::string_view algo) {
  const engine::NodeConfig& cfg = node_->config();
  if (root >= cfg.nodes)
    throw std::invalid_argument("broadcast: root " + std::to_string(root) +
                                " is outside the group of " + std::to_string(cfg.nodes));
  if (buffer.size() > cfg.max_message_bytes)
    throw std::invalid_argument("broadcast: " + std::to_string(buffer.size()) +
                                " bytes exceed the group's limit of " +
                                std::to_string(cfg.max_message_bytes));
  if (buffer.size() > 0 && buffer.data() == nullptr)
    throw std::invalid_argument("broadcast: null buffer");
  engine::Submission s;
  s.op = next_op_;
  s.root = root;
  s.buffer = buffer.data();
  s.size = buffer.size();
  s.algo = resolve(algo, buffer.size());
  if (!node_->submit(s))
    throw std::runtime_error("broadcast: too many broadcasts posted and not yet waited for");
  ++next_op_;
  return Completion(this, s.op);
}

algos::Algo Member::resolve(std::string_view algo, uint64_t size) const {
  if (algo.empty()) {
    if (default_algo_) return *default_algo_;
    algo = "auto";
  }
  if (algo == "auto") {
    algos::autoselect::Situation st;
    st.message_bytes = size;
    st.nodes = node_->config().nodes;
    return rules_->choose(st);
  }
  auto id = algos::algo_by_name(algo);
  if (!id) throw std::invalid_argument("broadcast: unknown algorithm '" + std::string(algo) + "'");
  return *id;
}

Rank Member::rank() const { return node_->rank(); }
const engine::NodeCounters& Member::counters() const { return node_->counters(); }

bool Member::collect(uint32_t op, engine::CompletionRecord* out) {
  auto it = std::find_if(early_.begin(), early_.end(), [&](const auto& r) { return r.op == op; });
  if (it != early_.end()) {
    *out = *it;
    early_.erase(it);
    return true;
  }
  engine::CompletionRecord rec;
  while (node_->take_completion(&rec)) {
    if (rec.op == op) {
      *out = rec;
      return true;
    }
    early_.push_back(rec);
  }
  return false;
}

bool Completion::ready() {
  if (done_) return true;
  if (member_ == nullptr) return false;
  done_ = member_->collect(op_, &rec_);
  return done_;
}

Status Completion::wait() {
  if (member_ == nullptr) return Status{engine::OpError::Internal, "empty completion"};
  // Nap with a growing period: the polling cores need the CPUs more than we do.
  long nap = 1'000;
  while (!ready()) {
    timespec ts{0, nap};
    nanosleep(&ts, nullptr);
    nap = std::min<long>(nap * 2, 100'000);
  }
  Status s;
  s.error = rec_.error;
  if (!s.ok()) s.message = describe(rec_);
  return s;
}

std::string describe(const engine::CompletionRecord& r) {
  const std::string held = " (" + std::to_string(r.segments_held) + " of " +
                           std::to_string(r.segments_total) + " segments held)";
  switch (r.error) {
    case engine::OpError::None: return "ok";
    case engine::OpError::PeerSilent:
      return "broadcast " + std::to_string(r.op) + " failed: rank " + std::to_string(r.peer) +
             " stopped acknowledging" + held;
    case engine::OpError::NoProgress:
      return "broadcast " + std::to_string(r.op) + " failed: nothing arrived before the deadline" + held;
    case engine::OpError::Mismatch:
      return "broadcast " + std::to_string(r.op) + " failed: rank " + std::to_string(r.peer) +
             " sends a different broadcast (root, size, algorithm or segment size) than this member posted";
    case engine::OpError::Internal:
      return "broadcast " + std::to_string(r.op) + " failed: internal error in the algorithm" + held;
  }
  return "unknown error";
}

}  // namespace lanecast
