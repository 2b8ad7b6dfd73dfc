#include "algos/symmetric.h"

#include "algos/bitmap.h"
#include "algos/topology/pieces.h"

namespace lanecast::algos {
namespace {

class SymmetricMachine final : public Machine {
 public:
  SymmetricMachine(const Plan& plan, Rank me, const SymmetricOptions& opt)
      : plan_(plan), v_(plan.to_virtual(me)), p_(plan.nodes()), m_(plan.segments()),
        one_phase_(m_ <= 1 || plan.message_bytes() < opt.one_phase_below_bytes),
        have_(v_ == 0 ? 0 : m_) {}

  void start(Actions& out) override {
    started_ = true;
    if (v_ != 0) return;
    held_ = m_;
    if (p_ < 2) return;
    if (one_phase_) {
      for (SegmentIndex seg = 0; seg < m_; ++seg)
        for (Rank v = 1; v < p_; ++v) out.send(plan_.to_real(v), seg, 0);
      return;
    }
    // Piece i goes to receiver i + 1; k-th segment of every piece in turn.
    const uint32_t k = p_ - 1;
    for (uint32_t j = 0;; ++j) {
      bool any = false;
      for (uint32_t c = 0; c < k; ++c) {
        const SegmentIndex seg = topology::piece_begin(c, k, m_) + j;
        if (seg >= topology::piece_begin(c + 1, k, m_)) continue;
        out.send(plan_.to_real(c + 1), seg, 0);
        any = true;
      }
      if (!any) break;
    }
  }

  void on_segment(SegmentIndex seg, Rank, Lane, Actions& out) override {
    if (v_ == 0 || seg >= m_ || !have_.test_and_set(seg)) return;
    ++held_;
    out.deliver(seg);
    if (one_phase_ || topology::piece_of(seg, p_ - 1, m_) + 1 != v_) return;
    // My own piece: on to every other receiver, starting after me.
    for (Rank i = 1; i + 1 < p_; ++i) {
      const Rank to = (v_ - 1 + i) % (p_ - 1) + 1;
      out.send(plan_.to_real(to), seg, 0);
    }
  }

  bool done() const override { return started_ && held_ == m_; }

 private:
  Plan plan_;
  Rank v_;
  uint32_t p_, m_;
  bool one_phase_;
  bool started_ = false;
  uint32_t held_ = 0;
  Bitmap have_;
};

}  // namespace

std::unique_ptr<Machine> make_symmetric(const Plan& plan, Rank me, const SymmetricOptions& opt) {
  return std::make_unique<SymmetricMachine>(plan, me, opt);
}

std::unique_ptr<Machine> make_symmetric(const Plan& plan, Rank me) {
  return make_symmetric(plan, me, SymmetricOptions{});
}

}  // namespace lanecast::algos
