// Member and Completion: the application side of a broadcast.
#include <algorithm>
#include <stdexcept>
#include <type_traits>

#include "engine/runtime/clock.h"
#include "lanecast/lanecast.h"
#include "engine/api/member_internals.h"
#include "engine/node/node.h"

namespace lanecast {

static_assert(std::is_same_v<Rank, algos::Rank> && kNoRank == algos::kNoRank,
              "the public Rank is the algorithms' rank");

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
  s.algo = resolve_algo(*this, algo, buffer.size());
  s.posted_ns = engine::now_ns();
  if (!node_->submit(s))
    throw std::runtime_error("broadcast: rank " + std::to_string(rank()) + " has 64 broadcasts not yet started");
  ++next_op_;
  held_[slot] = true;
  return Completion(this, s.op);
}

algos::autoselect::Situation situation_of(const Member& m, uint64_t size) {
  const engine::NodeConfig& cfg = m.node_->config();
  algos::autoselect::Situation st;
  st.message_bytes = size;
  st.nodes = cfg.nodes;
  st.lanes = cfg.lanes;
  st.multicast = m.node_->port_caps().multicast;
  st.latency_spread = m.spread_;
  return st;
}

algos::Algo resolve_algo(const Member& m, std::string_view algo, uint64_t size) {
  if (algo.empty()) {
    if (m.default_algo_) return *m.default_algo_;
    algo = "auto";
  }
  if (algo == "auto") return m.rules_->choose(situation_of(m, size));
  auto id = algos::algo_by_name(algo);
  if (!id) throw std::invalid_argument("broadcast: unknown algorithm '" + std::string(algo) + "'");
  return *id;
}

std::string Member::resolve(std::string_view algo, uint64_t size) const {
  return std::string(algos::algo_info(resolve_algo(*this, algo, size)).name);
}

Rank Member::rank() const { return node_->rank(); }
const engine::NodeCounters& node_counters(const Member& m) { return m.node_->counters(); }

std::vector<std::pair<std::string, uint64_t>> Member::counters() const {
  std::vector<std::pair<std::string, uint64_t>> out;
  node_->counters().for_each([&](std::string_view name, uint64_t v) { out.emplace_back(std::string(name), v); });
  return out;
}

ErrorKind error_kind(engine::OpError e) {
  switch (e) {
    case engine::OpError::None: return ErrorKind::None;
    case engine::OpError::PeerSilent: return ErrorKind::PeerSilent;
    case engine::OpError::NoProgress: return ErrorKind::NoProgress;
    case engine::OpError::Mismatch: return ErrorKind::Mismatch;
    case engine::OpError::Internal: return ErrorKind::Internal;
    case engine::OpError::GroupBroken: return ErrorKind::GroupBroken;
  }
  return ErrorKind::Internal;
}

Completion& Completion::operator=(Completion&& o) noexcept {
  if (this != &o) {
    release();
    member_ = o.member_;
    op_ = o.op_;
    done_ = o.done_;
    status_ = std::move(o.status_);
    start_ns_ = o.start_ns_;
    held_ns_ = o.held_ns_;
    finish_ns_ = o.finish_ns_;
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
  bool local;  // released (Completion::wait_local), not completed
  bool came() const { return local ? box->released(op) : box->ready(op); }
};

bool op_done(const void* a) { return static_cast<const AwaitedOp*>(a)->came(); }

// Waits for `op` - completed, or with `local` released - until deadline_ns
// (engine clock; UINT64_MAX: no limit). With an engine that progresses in
// calls this thread drives the member's poller meanwhile; while another
// thread drives it, this one sleeps on the box in short slices and takes
// over when that thread leaves.
bool await_op(engine::Node& node, uint32_t op, uint64_t deadline_ns, bool local = false) {
  engine::CompletionBox& box = node.completions();
  engine::Poller* driver = node.driver();
  if (driver == nullptr) {
    const uint64_t now = engine::now_ns();
    return box.wait(op, deadline_ns == UINT64_MAX ? UINT64_MAX : deadline_ns - std::min(deadline_ns, now), local);
  }
  const AwaitedOp w{&box, op, local};
  constexpr uint64_t kSliceNs = 100'000;
  for (;;) {
    if (w.came()) return true;
    const uint64_t now = engine::now_ns();
    if (now >= deadline_ns) return false;
    if (!driver->drive_until(op_done, &w, deadline_ns)) box.wait(op, std::min(kSliceNs, deadline_ns - now), local);
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
    const AwaitedOp w{&box, op_, false};
    driver->drive_until(op_done, &w, 0);
  }
  if (!box.ready(op_)) return false;
  const engine::CompletionRecord& rec = box.record(op_);
  status_.error = error_kind(rec.error);
  status_.peer = rec.peer;
  if (!status_.ok()) status_.message = describe(rec);  // text only for a failure: no allocation otherwise
  start_ns_ = rec.start_ns;
  held_ns_ = rec.held_ns;
  finish_ns_ = rec.finish_ns;
  member_->held_[op_ % engine::CompletionBox::kSlots] = false;
  done_ = true;
  return true;
}

Status Completion::wait() {
  if (done_) return status_;
  if (member_ == nullptr) return Status{ErrorKind::Internal, "empty completion"};
  await_op(*member_->node_, op_, UINT64_MAX);
  ready();
  return status_;
}

Status Completion::wait_local() {
  if (done_) return status_;
  if (member_ == nullptr) return Status{ErrorKind::Internal, "empty completion"};
  await_op(*member_->node_, op_, UINT64_MAX, /*local=*/true);
  if (member_->node_->completions().ready(op_)) {
    ready();
    return status_;
  }
  return Status{};
}

std::optional<Status> Completion::wait_for(std::chrono::nanoseconds timeout) {
  if (done_) return status_;
  if (member_ == nullptr) return Status{ErrorKind::Internal, "empty completion"};
  const uint64_t ns = timeout.count() <= 0 ? 0 : static_cast<uint64_t>(timeout.count());
  const uint64_t now = engine::now_ns();
  const uint64_t deadline = ns > UINT64_MAX - now ? UINT64_MAX : now + ns;
  if (!await_op(*member_->node_, op_, deadline)) return std::nullopt;
  ready();
  return status_;
}

std::string describe(const engine::CompletionRecord& r) {
  const std::string held = " (" + std::to_string(r.segments_held) + " of " + std::to_string(r.segments_total) +
                           " segments held)";
  switch (r.error) {
    case engine::OpError::None: return "ok";
    case engine::OpError::PeerSilent:
      return "broadcast " + std::to_string(r.op) + " failed: rank " + std::to_string(r.peer) +
             " stopped acknowledging" + held;
    case engine::OpError::NoProgress: {
      std::string quiet;
      if (r.quiet_peer != algos::kNoRank)
        quiet = "; rank " + std::to_string(r.quiet_peer) + " was silent longest, " +
                std::to_string(r.quiet_ns / 1'000'000) + " ms";
      return "broadcast " + std::to_string(r.op) + " failed: nothing arrived before the deadline" + held + quiet;
    }
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
