// Member and Completion: the application side of a broadcast.
#include <algorithm>
#include <stdexcept>

#include "engine/clock.h"
#include "engine/lanecast.h"
#include "engine/node.h"

namespace lanecast {

Completion Member::broadcast(Rank root, std::span<std::byte> buffer, std::string_view algo) {
  const engine::NodeConfig& cfg = node_->config();
  if (root >= cfg.nodes)
    throw std::invalid_argument("broadcast: root " + std::to_string(root) + " is outside the group of " +
                                std::to_string(cfg.nodes));
  if (buffer.size() > cfg.max_message_bytes)
    throw std::invalid_argument("broadcast: " + std::to_string(buffer.size()) +
                                " bytes exceed the group's limit of " + std::to_string(cfg.max_message_bytes));
  if (buffer.size() > 0 && buffer.data() == nullptr) throw std::invalid_argument("broadcast: null buffer");
  const uint32_t slot = next_op_ % engine::CompletionBox::kSlots;
  if (held_[slot])
    throw std::runtime_error("broadcast: 64 broadcasts outstanding on rank " + std::to_string(rank()) +
                             ": wait for (or drop) the completion of broadcast " +
                             std::to_string(next_op_ - engine::CompletionBox::kSlots) + " first");
  engine::Submission s;
  s.op = next_op_;
  s.root = root;
  s.buffer = buffer.data();
  s.size = buffer.size();
  s.algo = resolve(algo, buffer.size());
  s.posted_ns = engine::now_ns();
  if (!node_->submit(s))
    throw std::runtime_error("broadcast: rank " + std::to_string(rank()) + " has 64 broadcasts not yet started");
  ++next_op_;
  held_[slot] = true;
  return Completion(this, s.op);
}

algos::autoselect::Situation Member::situation(uint64_t size) const {
  const engine::NodeConfig& cfg = node_->config();
  algos::autoselect::Situation st;
  st.message_bytes = size;
  st.nodes = cfg.nodes;
  st.lanes = cfg.lanes;
  st.multicast = node_->port_caps().multicast;
  st.latency_spread = spread_;
  return st;
}

algos::Algo Member::resolve(std::string_view algo, uint64_t size) const {
  if (algo.empty()) {
    if (default_algo_) return *default_algo_;
    algo = "auto";
  }
  if (algo == "auto") return rules_->choose(situation(size));
  auto id = algos::algo_by_name(algo);
  if (!id) throw std::invalid_argument("broadcast: unknown algorithm '" + std::string(algo) + "'");
  return *id;
}

Rank Member::rank() const { return node_->rank(); }
const engine::NodeCounters& Member::counters() const { return node_->counters(); }

Completion& Completion::operator=(Completion&& o) noexcept {
  if (this != &o) {
    release();
    member_ = o.member_;
    op_ = o.op_;
    done_ = o.done_;
    rec_ = o.rec_;
    o.member_ = nullptr;
    o.done_ = false;
  }
  return *this;
}

Completion::~Completion() { release(); }

// Gives the box slot back to the member (once the outcome is read, or when
// nobody will read it).
void Completion::release() {
  if (member_ != nullptr && !done_) member_->held_[op_ % engine::CompletionBox::kSlots] = false;
  member_ = nullptr;
}

namespace {

struct AwaitedOp {
  const engine::CompletionBox* box;
  uint32_t op;
};

bool op_done(const void* a) {
  const auto* w = static_cast<const AwaitedOp*>(a);
  return w->box->ready(w->op);
}

// Waits for `op` until deadline_ns (engine clock; UINT64_MAX: no limit). With
// an engine that progresses in calls this thread drives the member's poller
// meanwhile; while another thread drives it, this one sleeps on the box in
// short slices and takes over when that thread leaves.
bool await_op(engine::Node& node, uint32_t op, uint64_t deadline_ns) {
  engine::CompletionBox& box = node.completions();
  engine::Poller* driver = node.driver();
  if (driver == nullptr) {
    const uint64_t now = engine::now_ns();
    return box.wait(op, deadline_ns == UINT64_MAX ? UINT64_MAX : deadline_ns - std::min(deadline_ns, now));
  }
  const AwaitedOp w{&box, op};
  constexpr uint64_t kSliceNs = 100'000;
  for (;;) {
    if (box.ready(op)) return true;
    const uint64_t now = engine::now_ns();
    if (now >= deadline_ns) return false;
    if (!driver->drive_until(op_done, &w, deadline_ns)) box.wait(op, std::min(kSliceNs, deadline_ns - now));
  }
}

}  // namespace

bool Completion::ready() {
  if (done_) return true;
  if (member_ == nullptr) return false;
  engine::CompletionBox& box = member_->node_->completions();
  // Progress in calls: a look is a turn of the loop (drive_until's last turns
  // run even past its deadline).
  if (engine::Poller* driver = member_->node_->driver(); driver != nullptr && !box.ready(op_)) {
    const AwaitedOp w{&box, op_};
    driver->drive_until(op_done, &w, 0);
  }
  if (!box.ready(op_)) return false;
  rec_ = box.record(op_);
  member_->held_[op_ % engine::CompletionBox::kSlots] = false;
  done_ = true;
  return true;
}

Status Completion::status() const {
  Status s;
  s.error = rec_.error;
  s.peer = rec_.peer;
  if (!s.ok()) s.message = describe(rec_);
  return s;
}

Status Completion::wait() {
  if (done_) return status();
  if (member_ == nullptr) return Status{engine::OpError::Internal, "empty completion"};
  await_op(*member_->node_, op_, UINT64_MAX);
  ready();
  return status();
}

std::optional<Status> Completion::wait_for(std::chrono::nanoseconds timeout) {
  if (done_) return status();
  if (member_ == nullptr) return Status{engine::OpError::Internal, "empty completion"};
  const uint64_t ns = timeout.count() <= 0 ? 0 : static_cast<uint64_t>(timeout.count());
  const uint64_t now = engine::now_ns();
  const uint64_t deadline = ns > UINT64_MAX - now ? UINT64_MAX : now + ns;
  if (!await_op(*member_->node_, op_, deadline)) return std::nullopt;
  ready();
  return status();
}

std::string describe(const engine::CompletionRecord& r) {
  const std::string held = " (" + std::to_string(r.segments_held) + " of " + std::to_string(r.segments_total) +
                           " segments held)";
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
    case engine::OpError::GroupBroken: {
      const std::string who = r.peer == algos::kNoRank ? "a member (which one, nobody could tell)"
                                                       : "rank " + std::to_string(r.peer);
      return "broadcast " + std::to_string(r.op) + " failed: the group lost " + who + " (seen by rank " +
             (r.reporter == algos::kNoRank ? std::string("?") : std::to_string(r.reporter)) + " during broadcast " +
             std::to_string(r.broken_op) + "); re-form the group to go on";
    }
  }
  return "unknown error";
}

}  // namespace lanecast
