#include "algos/mcast_chain.h"

#include <stdexcept>

#include "algos/bitmap.h"
#include "algos/mix.h"

namespace lanecast::algos {
namespace {

constexpr uint32_t kDelayTag = 1;  // the root's delay timer
constexpr uint32_t kSyncTag = 1;   // the synchronising rank's "started" signal
// Repair on request (AlgoOptions::nack_repair), a node to its predecessor:
constexpr uint32_t kDoneTag = 2;    // it holds every segment
constexpr uint32_t kNackBase = 16;  // + segment: it lacks that segment (segments < 2^28)
constexpr uint32_t kMinRequestSegments = 3;  // fewer: the paper's ring even with nack_repair

class McastChain final : public Machine {
 public:
  McastChain(const Plan& plan, Rank me, std::pmr::memory_resource* mem)
      : m_(plan.segments()),
        root_(me == plan.root()),
        root_rank_(plan.root()),
        have_(plan.segments(), mem),
        asked_(plan.segments(), mem) {  // with either repair: one arena bound for both
    const Rank v = plan.to_virtual(me);
    if (v + 1 < plan.nodes()) next_ = plan.to_real(v + 1);  // none into the root
    if (v > 0) prev_ = plan.to_real(v - 1);
    multicast_ = plan.nodes() > 1;
    ring_lane_ = plan.lanes() > 1 ? 1 : 0;
    const AlgoOptions& o = plan.params().algo;
    if (!multicast_ || m_ == 0) return;  // nothing to multicast: no options
    // One or two segments: the paper's ring. Asking costs each edge an "all
    // held" signal (and its ack), as much as the one repair it would save.
    on_request_ = o.nack_repair && m_ >= kMinRequestSegments;
    if (root_) delay_ns_ = o.root_delay_ns;
    if (o.sync_seed != 0) {
      const Rank c = mcast_sync_rank(o.sync_seed, plan.params().op, plan.nodes(), plan.root());
      if (root_) sync_from_ = c;
      else tell_root_ = c == me;
    }
  }

  void start(Actions& out) override {
    started_ = true;
    if (!root_) {
      if (tell_root_) out.signal(root_rank_, kSyncTag);
      return;
    }
    wait_timer_ = delay_ns_ > 0;
    wait_signal_ = sync_from_ != kNoRank;
    if (wait_timer_) out.arm(delay_ns_, kDelayTag);
    go(out);
  }

  void on_timer(uint32_t tag, Actions& out) override {
    if (tag != kDelayTag || !wait_timer_) return;
    wait_timer_ = false;
    go(out);
  }

  void on_signal(Rank from, uint32_t tag, Actions& out) override {
    if (tag == kSyncTag && from == sync_from_ && wait_signal_) {
      wait_signal_ = false;
      go(out);
      return;
    }
    // Repair on request, from the successor; once it holds everything,
    // nothing is left to repair (a request that comes after is stale).
    if (!on_request_ || from != next_ || told_done_) return;
    if (tag == kDoneTag) {
      told_done_ = true;
    } else if (tag >= kNackBase && tag - kNackBase + 1 < m_ && asked_.test_and_set(tag - kNackBase) &&
               holds(tag - kNackBase)) {
      out.send(next_, tag - kNackBase, ring_lane_);  // else when it comes (on_segment); the last goes unasked
    }
  }

  void on_segment(SegmentIndex seg, Rank, Lane, Actions& out) override {
    if (root_ || seg >= m_ || !have_.test_and_set(seg)) return;  // a later copy
    ++held_;
    out.deliver(seg);
    if (!on_request_) {
      if (next_ != kNoRank) out.send(next_, seg, ring_lane_);  // the paper's ring
      return;
    }
    // The last segment always goes on (it closes the successor's gaps), any
    // other only when the successor asked for it.
    if (next_ != kNoRank && (seg == m_ - 1 || asked_.test(seg))) out.send(next_, seg, ring_lane_);
    // Every segment before this one that has not come by now is asked for,
    // once (the scan only moves forward).
    for (; scan_ < seg; ++scan_)
      if (!have_.test(scan_)) out.signal(prev_, kNackBase + scan_);
    if (scan_ == seg) ++scan_;
    if (held_ == m_) out.signal(prev_, kDoneTag);
  }

  bool done() const override {
    if (!started_ || held_ != m_ || wait_timer_ || wait_signal_) return false;
    return !(on_request_ && next_ != kNoRank) || told_done_;  // the successor may still ask
  }

 private:
  bool holds(SegmentIndex s) const { return root_ || have_.test(s); }

  // The root's stage 1 and its part of stage 2, once nothing holds it back.
  void go(Actions& out) {
    if (wait_timer_ || wait_signal_) return;
    for (SegmentIndex s = 0; s < m_; ++s) {
      if (multicast_) out.multicast(s, 0);
      if (next_ != kNoRank && !on_request_) out.send(next_, s, ring_lane_);
    }
    if (on_request_ && next_ != kNoRank) out.send(next_, m_ - 1, ring_lane_);
    held_ = m_;
  }

  uint32_t m_;
  bool root_;
  Rank root_rank_;
  bool started_ = false;
  bool multicast_ = false;
  Lane ring_lane_ = 0;
  Rank next_ = kNoRank, prev_ = kNoRank;
  uint32_t held_ = 0;
  Bitmap have_;
  // Repair on request: on; what the successor asked for; how far this node
  // looked for its own gaps; whether the successor said it holds everything.
  bool on_request_ = false;
  Bitmap asked_;
  SegmentIndex scan_ = 0;
  bool told_done_ = false;
  // Options (root): the delay still to wait, the rank whose signal it awaits.
  uint64_t delay_ns_ = 0;
  Rank sync_from_ = kNoRank;
  bool wait_timer_ = false, wait_signal_ = false;
  bool tell_root_ = false;  // this node synchronises the root in this operation
};

}  // namespace

std::unique_ptr<Machine> make_mcast_chain(const Plan& plan, Rank me) {
  return make_on_heap<McastChain>(plan, me);
}

MachinePtr make_mcast_chain(const Plan& plan, Rank me, MachineArena& arena) {
  return arena.make<McastChain>(plan, me);
}

// The machine, its have-bitmap, which every rank has, the root included, and
// (repair on request) what its successor asked for.
size_t mcast_chain_arena_bytes(uint32_t nodes, uint32_t max_segments) {
  (void)nodes;
  return arena_block(sizeof(McastChain)) + 2 * arena_block(Bitmap::bytes_for(max_segments));
}

Rank mcast_sync_rank(uint64_t seed, uint64_t op, uint32_t p, Rank root) {
  if (p < 2) throw std::invalid_argument("mcast_sync_rank: a group of one has no rank to wait for");
  if (root >= p) throw std::invalid_argument("mcast_sync_rank: root is outside the group");
  // A splitmix64 stream keyed by (seed, op); rejection sampling makes the draw
  // exactly uniform over the p-1 non-root ranks.
  uint64_t state = seed;
  state = splitmix64(state) ^ op;
  const uint64_t n = p - 1;
  const uint64_t reject_below = (0 - n) % n;  // 2^64 mod n
  uint64_t x;
  do x = splitmix64(state);
  while (x < reject_below);
  return static_cast<Rank>((root + 1 + x % n) % p);
}

}  // namespace lanecast::algos
