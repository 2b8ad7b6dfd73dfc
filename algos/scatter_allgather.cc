#include "algos/scatter_allgather.h"

#include <bit>
#include <stdexcept>

#include "algos/bitmap.h"
#include "algos/topology/binomial.h"
#include "algos/topology/pieces.h"

namespace lanecast::algos {
namespace {

// Whether the allgather is recursive doubling (else the ring) in a group of p.
bool uses_doubling(Allgather mode, uint32_t p) {
  const bool pow2 = std::has_single_bit(p);
  if (mode == Allgather::RecursiveDoubling && !pow2)
    throw std::invalid_argument("scatter_allgather: recursive doubling needs a power-of-two group");
  return mode == Allgather::RecursiveDoubling || (mode == Allgather::Auto && pow2);
}

class ScatterAllgatherMachine final : public Machine {
 public:
  ScatterAllgatherMachine(const Plan& plan, Rank me, Allgather mode, std::pmr::memory_resource* mem)
      : plan_(plan), v_(plan.to_virtual(me)), p_(plan.nodes()), m_(plan.segments()),
        sub_end_(topology::binomial_subtree_end(v_, p_)),
        parent_(topology::binomial_parent(v_)),
        succ_(p_ > 1 ? (v_ + 1) % p_ : kNoRank),
        doubling_(uses_doubling(mode, p_)),
        // The ring needs a guard: a node's subtree chunks come by the scatter
        // and again round the ring.
        have_(v_ != 0 && !doubling_ ? m_ : 0, mem) {
    steps_ = static_cast<uint32_t>(std::countr_zero(std::bit_ceil(p_)));
    child_count_ = topology::binomial_children(v_, p_, children_);
    // Recursive doubling sees every segment once: holding them all is enough.
    if (v_ != 0 && !doubling_) scatter_expect_ = chunk_begin(sub_end_) - chunk_begin(v_);
    ring_expect_ = doubling_ || p_ < 2 ? 0 : m_ - (chunk_begin(v_ + 1) - chunk_begin(v_));
  }

  void start(Actions& out) override {
    started_ = true;
    if (v_ != 0) return;
    held_ = m_;
    if (m_ == 0) return;
    for (uint32_t i = 0; i < child_count_; ++i) {  // scatter: each child its subtree
      const Rank c = children_[i];
      for (SegmentIndex s = chunk_begin(c); s < chunk_begin(topology::binomial_subtree_end(c, p_)); ++s)
        out.send(plan_.to_real(c), s, 0);
    }
    if (doubling_) {
      for (uint32_t k = 0; k < steps_; ++k)  // step k: chunks [0, 2^k) to rank 2^k
        for (SegmentIndex s = 0; s < chunk_begin(1u << k); ++s) out.send(plan_.to_real(1u << k), s, 0);
    } else if (succ_ != kNoRank) {
      for (SegmentIndex s = chunk_begin(0); s < chunk_begin(1); ++s) out.send(plan_.to_real(succ_), s, 0);
    }
  }

  void on_segment(SegmentIndex seg, Rank from, Lane, Actions& out) override {
    if (seg >= m_) return;
    const uint32_t c = topology::piece_of(seg, p_, m_);
    if (doubling_) {
      // Recursive doubling hands every segment to a node exactly once (from its
      // scatter parent or from one partner), so no bitmap guards against
      // copies: at 4096 nodes its cache miss was a tenth of a simulated frame.
      if (v_ == 0) return;
      ++held_;
      out.deliver(seg);
      if (c > v_ && c < sub_end_) scatter_forward(c, seg, out);
      for (uint32_t k = static_cast<uint32_t>(std::bit_width(c ^ v_)); k < steps_; ++k) {
        const Rank w = v_ ^ (1u << k);
        const bool w_holds = w == 0 || (c >= w && c < topology::binomial_subtree_end(w, p_));
        if (!w_holds) out.send(plan_.to_real(w), seg, 0);
      }
      return;
    }
    const bool scatter = v_ != 0 && plan_.to_virtual(from) == parent_ && c >= v_ && c < sub_end_;
    if (scatter) {
      ++scatter_in_;
      if (c != v_)
        scatter_forward(c, seg, out);
      else
        out.send(plan_.to_real(succ_), seg, 0);  // my own chunk starts round the ring
    } else {
      ++ring_in_;
      if (c != succ_) out.send(plan_.to_real(succ_), seg, 0);
    }
    if (v_ != 0 && have_.test_and_set(seg)) {
      ++held_;
      out.deliver(seg);
    }
  }

  bool done() const override {
    return started_ && held_ == m_ && scatter_in_ == scatter_expect_ && ring_in_ == ring_expect_;
  }

 private:
  SegmentIndex chunk_begin(uint32_t c) const { return topology::piece_begin(c, p_, m_); }
  // Chunk c of my subtree (c > v) goes to the child whose subtree holds it.
  void scatter_forward(uint32_t c, SegmentIndex seg, Actions& out) const {
    out.send(plan_.to_real(v_ + std::bit_floor(c - v_)), seg, 0);
  }

  Plan plan_;
  Rank v_;
  uint32_t p_, m_;
  Rank sub_end_, parent_, succ_;
  bool doubling_ = false;
  uint32_t steps_ = 0;
  uint32_t child_count_ = 0;
  topology::BinomialChildren children_{};
  uint32_t scatter_expect_ = 0, ring_expect_ = 0;
  // Cursor: started, segments held, arrivals per phase, which segments.
  bool started_ = false;
  uint32_t held_ = 0, scatter_in_ = 0, ring_in_ = 0;
  Bitmap have_;
};

}  // namespace

std::unique_ptr<Machine> make_scatter_allgather(const Plan& plan, Rank me, Allgather allgather) {
  return make_on_heap<ScatterAllgatherMachine>(plan, me, allgather);
}

std::unique_ptr<Machine> make_scatter_allgather(const Plan& plan, Rank me) {
  return make_scatter_allgather(plan, me, Allgather::Auto);
}

MachinePtr make_scatter_allgather(const Plan& plan, Rank me, Allgather allgather, MachineArena& arena) {
  return arena.make<ScatterAllgatherMachine>(plan, me, allgather);
}

MachinePtr make_scatter_allgather(const Plan& plan, Rank me, MachineArena& arena) {
  return make_scatter_allgather(plan, me, Allgather::Auto, arena);
}

// The machine, and the have-bitmap of a receiver when the allgather is the
// ring (recursive doubling needs none).
size_t scatter_allgather_arena_bytes(uint32_t nodes, uint32_t max_segments, Allgather allgather) {
  const bool ring = allgather == Allgather::Ring || (allgather == Allgather::Auto && !std::has_single_bit(nodes));
  return arena_block(sizeof(ScatterAllgatherMachine)) +
         (nodes > 1 && ring ? arena_block(Bitmap::bytes_for(max_segments)) : 0);
}

}  // namespace lanecast::algos
