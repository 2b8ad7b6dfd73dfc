#include "algos/mcast_chain.h"

#include "algos/bitmap.h"

namespace lanecast::algos {
namespace {

class McastChain final : public Machine {
 public:
  McastChain(const Plan& plan, Rank me)
      : m_(plan.segments()), root_(me == plan.root()), have_(plan.segments()) {
    const Rank v = plan.to_virtual(me);
    if (v + 1 < plan.nodes()) next_ = plan.to_real(v + 1);  // none into the root
    multicast_ = plan.nodes() > 1;
    ring_lane_ = plan.lanes() > 1 ? 1 : 0;
  }

  void start(Actions& out) override {
    started_ = true;
    if (!root_) return;
    for (SegmentIndex s = 0; s < m_; ++s) {
      if (multicast_) out.multicast(s, 0);
      if (next_ != kNoRank) out.send(next_, s, ring_lane_);
    }
    held_ = m_;
  }

  void on_segment(SegmentIndex seg, Rank, Lane, Actions& out) override {
    if (root_ || seg >= m_ || !have_.test_and_set(seg)) return;  // a later copy
    ++held_;
    out.deliver(seg);
    if (next_ != kNoRank) out.send(next_, seg, ring_lane_);
  }

  bool done() const override { return started_ && held_ == m_; }

 private:
  uint32_t m_;
  bool root_;
  bool started_ = false;
  bool multicast_ = false;
  Lane ring_lane_ = 0;
  Rank next_ = kNoRank;
  uint32_t held_ = 0;
  Bitmap have_;
};

}  // namespace

std::unique_ptr<Machine> make_mcast_chain(const Plan& plan, Rank me) {
  return std::make_unique<McastChain>(plan, me);
}

}  // namespace lanecast::algos
