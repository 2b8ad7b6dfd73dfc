#include "algos/symmetric.h"

#include "algos/bitmap.h"
#include "algos/topology/pieces.h"

namespace lanecast::algos {
namespace {

// The order in which receiver v (1..k, k = p - 1) forwards a segment of its own
// piece: v + 2, v + 4, ... modulo an odd modulus. Why: the root hands out the
// j-th segments of all pieces round robin, so receiver v starts forwarding one
// frame time after receiver v - 1, and in steady state every receiver sends
// one frame per frame time. With destinations v + c i at its i-th frame, the
// receivers sending in one frame time t target (1 - c) v + c t: for c = 2 (and
// an odd k) that is a permutation of the receivers, and the only one nobody
// targets at t is the one the root is feeding then. Every rx port then takes
// one frame per frame time and no queue forms. The naive order v + 1, v + 2,
// ... (c = 1) sends every receiver's copy to the same port at the same time: a
// (p - 2)-way incast. A cyclic group of even order has no such schedule (it
// has no complete mapping, Hall and Paige 1955), so an even k counts modulo
// k + 1 and skips the phantom residue 0: the one skipped frame shifts a sender
// by one slot, which lets at most two senders meet at a port.
//
// With fewer segments than receivers most pieces are empty, and the receivers
// that hold one start one frame time apart although their numbers are further
// apart: counted from their own numbers, the orders meet (at 47 935 segments
// on 65 536 nodes whole bursts went to one port at once). So each counts from
// the place it has among the holders - the root's j-th frame, which is the
// segment's index - as if every piece were held: holder j sends in the order
// of receiver j + 1, and where that order reaches itself, to receiver j + 1
// (the one it leaves out) instead. With every piece held, the place is the
// receiver's own number and nothing changes.
// Our addition: Juhasz sends the pieces "all at once" and leaves the order open.
constexpr uint32_t forward_order_modulus(uint32_t k) { return k % 2 == 1 ? k : k + 1; }

class SymmetricMachine final : public Machine {
 public:
  SymmetricMachine(const Plan& plan, Rank me, const SymmetricOptions& opt, std::pmr::memory_resource* mem)
      : plan_(plan), v_(plan.to_virtual(me)), p_(plan.nodes()), m_(plan.segments()),
        one_phase_(m_ <= 1 || plan.message_bytes() < opt.one_phase_below_bytes),
        have_(v_ == 0 ? 0 : m_, mem) {}

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
    // My own piece: on to every other receiver, in an order under which no two
    // receivers send to the same one at once (see forward_order_modulus()),
    // counted from my place among the holders.
    const uint32_t k = p_ - 1, mod = forward_order_modulus(k);
    const uint32_t place = m_ < k ? seg + 1 : v_;
    uint32_t r = place % mod;
    for (uint32_t i = 1; i < mod; ++i) {
      r = (r + 2) % mod;  // place + 2i
      if (r == 0 && mod != k) continue;  // the phantom receiver of an even k
      const uint32_t to = r == 0 ? k : r;
      out.send(plan_.to_real(to == v_ ? place : to), seg, 0);
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
  return make_on_heap<SymmetricMachine>(plan, me, opt);
}

std::unique_ptr<Machine> make_symmetric(const Plan& plan, Rank me) {
  return make_symmetric(plan, me, SymmetricOptions{});
}

MachinePtr make_symmetric(const Plan& plan, Rank me, const SymmetricOptions& opt, MachineArena& arena) {
  return arena.make<SymmetricMachine>(plan, me, opt);
}

MachinePtr make_symmetric(const Plan& plan, Rank me, MachineArena& arena) {
  return make_symmetric(plan, me, SymmetricOptions{}, arena);
}

// The machine, and the have-bitmap of a receiver (the root has none).
size_t symmetric_arena_bytes(uint32_t nodes, uint32_t max_segments) {
  return arena_block(sizeof(SymmetricMachine)) + (nodes > 1 ? arena_block(Bitmap::bytes_for(max_segments)) : 0);
}

}  // namespace lanecast::algos
