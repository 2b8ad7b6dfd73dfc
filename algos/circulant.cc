#include "algos/circulant.h"

#include <algorithm>
#include <array>
#include <stdexcept>

#include "algos/bitmap.h"
#include "algos/topology/circulant.h"

namespace lanecast::algos {
namespace {

using topology::CirculantRounds;
using topology::kMaxCirculantRounds;

class CirculantMachine final : public Machine {
 public:
  CirculantMachine(const Plan& plan, Rank me, std::pmr::memory_resource* mem)
      : segments_(plan.segments()), root_(plan.to_virtual(me) == 0),
        rounds_(topology::circulant_phase(plan.nodes()), std::max<uint32_t>(segments_, 1)),
        have_(root_ ? 0 : segments_, mem) {
    const topology::CirculantSchedule skips = topology::circulant_skips(plan.nodes());
    topology::for_each_circulant_target(skips, plan.to_virtual(me), [&](uint32_t k, Rank to, const auto& theirs) {
      target_[k] = plan.to_real(to);
      send_[k] = static_cast<int8_t>(theirs[k]);  // in [-q, q)
      if (segments_ == 0) return;
      const uint64_t last = topology::circulant_last_block_round(rounds_, theirs, segments_);
      if (last >= rounds_.end || rounds_.end - last > UINT8_MAX)
        throw std::logic_error("circulant: a rank would never get the last segment");
      last_block_back_[k] = static_cast<uint8_t>(rounds_.end - last);
    });
    cursor_ = segments_ == 0 || skips.q == 0 ? rounds_.end : rounds_.first;
  }

  void start(Actions& out) override {
    started_ = true;
    advance(out);
  }

  void on_segment(SegmentIndex seg, Rank, Lane, Actions& out) override {
    if (root_ || seg >= segments_ || !have_.test_and_set(seg)) return;
    ++held_;
    out.deliver(seg);
    advance(out);
  }

  bool done() const override { return started_ && (root_ || held_ == segments_) && cursor_ == rounds_.end; }

 private:
  // Make every send of the rounds from the cursor on, in order, up to the
  // first whose segment has not arrived.
  void advance(Actions& out) {
    const int64_t last = int64_t{segments_} - 1;
    for (; cursor_ < rounds_.end; ++cursor_) {
      const uint32_t k = rounds_.k(cursor_);
      if (target_[k] == kNoRank) continue;
      const int64_t block = rounds_.block(send_[k], cursor_);
      if (block < 0) continue;                                        // not yet a segment
      if (block >= last && rounds_.end - cursor_ < last_block_back_[k]) continue;  // a repeat of the last
      const SegmentIndex seg = static_cast<SegmentIndex>(std::min(block, last));
      if (!root_ && !have_.test(seg)) return;  // the round waits for its segment
      out.send(target_[k], seg, 0);
    }
  }

  uint32_t segments_;
  bool root_;
  CirculantRounds rounds_;
  // Per round of a phase: the real rank sent to (kNoRank: the root), the
  // offset sent, and how many rounds before the end that rank receives the
  // last segment (later sends of it would be repeats).
  std::array<Rank, kMaxCirculantRounds> target_ = filled(kNoRank);
  std::array<int8_t, kMaxCirculantRounds> send_{};
  std::array<uint8_t, kMaxCirculantRounds> last_block_back_{};
  // Cursor: started, the next round to send in, segments held, which ones.
  bool started_ = false;
  uint64_t cursor_ = 0;
  uint32_t held_ = 0;
  Bitmap have_;

  static constexpr std::array<Rank, kMaxCirculantRounds> filled(Rank r) {
    std::array<Rank, kMaxCirculantRounds> a{};
    a.fill(r);
    return a;
  }
};

}  // namespace

std::unique_ptr<Machine> make_circulant(const Plan& plan, Rank me) { return make_on_heap<CirculantMachine>(plan, me); }

MachinePtr make_circulant(const Plan& plan, Rank me, MachineArena& arena) {
  return arena.make<CirculantMachine>(plan, me);
}

// The machine, and the have-bitmap of a receiver (the root has none).
size_t circulant_arena_bytes(uint32_t nodes, uint32_t max_segments) {
  return arena_block(sizeof(CirculantMachine)) + (nodes > 1 ? arena_block(Bitmap::bytes_for(max_segments)) : 0);
}

}  // namespace lanecast::algos
