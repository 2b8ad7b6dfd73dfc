// When a member acknowledges what it received, per reliable channel: the
// part of a node that owns the acks it owes. At once when the sender asks
// (its last frame for us, a full window, a frame sent again) or when a
// frame came past a gap (the sender must learn of the gap); otherwise after
// `ack_every` frames or `delay_ns`, whichever comes first - fewer acks on a
// busy channel, none late on a quiet one.
//
// It decides, the node sends: send_due() hands each channel whose ack is
// due to the node's send function, which builds and queues it if its lane
// has room. Bounded: each channel is queued at most once per list, in
// memory reserved at construction. No DPDK, no clock: time is an argument.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace lanecast::engine::reliable {

class AckSchedule {
 public:
  AckSchedule(uint32_t channels, uint32_t ack_every, uint64_t delay_ns)
      : every_(ack_every ? ack_every : 1), delay_ns_(delay_ns), state_(channels), later_(channels + 1) {
    now_.reserve(channels);
  }

  // A data frame accepted on channel `ch`; `urgent`: its sender asked for
  // an ack now; `in_order`: it was the next the channel expected. Forced
  // inline: every data frame received comes here, and GCC 12 put it out of
  // line in the node's grown receive function.
  [[gnu::always_inline]] void accepted(uint32_t ch, bool urgent, bool in_order, uint64_t now) {
    State& s = state_[ch];
    ++s.unacked;
    if (urgent || !in_order || s.unacked >= every_) {
      ack_now(ch);
      return;
    }
    if (s.kind != kNone) return;
    if (later_count_ == later_.size()) {  // cannot happen: one entry per channel, plus one
      ack_now(ch);
      return;
    }
    s.kind = kLater;
    s.deadline = now + delay_ns_;
    later_[(later_head_ + later_count_++) % later_.size()] = Later{ch, s.deadline};
  }
  // Channel `ch` must ack at once (a duplicate: our ack was lost or late).
  void ack_now(uint32_t ch) {
    State& s = state_[ch];
    if (s.kind == kNow) return;
    s.kind = kNow;
    now_.push_back(ch);  // capacity reserved for every channel
  }

  // Sends the acks due at `now`, in order: `send(ch)` queues channel ch's
  // ack and returns true, or false when its lane has no room - then the
  // rest waits for the next turn.
  template <class Send>
  void send_due(uint64_t now, Send&& send) {
    size_t i = 0;
    for (; i < now_.size(); ++i) {
      const uint32_t ch = now_[i];
      if (state_[ch].kind == kNone) continue;  // sent meanwhile
      if (!send(ch)) break;
      sent(ch);
    }
    now_.erase(now_.begin(), now_.begin() + static_cast<std::ptrdiff_t>(i));
    while (later_count_ > 0) {
      const Later& due = later_[later_head_];
      const State& s = state_[due.channel];
      if (s.kind == kLater && s.deadline == due.deadline) {
        if (due.deadline > now) break;
        if (!send(due.channel)) break;
        sent(due.channel);
      }
      later_head_ = (later_head_ + 1) % later_.size();
      --later_count_;
    }
  }

  // An ack is owed at once: the core must not sleep.
  bool urgent() const { return !now_.empty(); }
  // The earliest deadline of a delayed ack (UINT64_MAX: none).
  uint64_t next_deadline() const { return later_count_ > 0 ? later_[later_head_].deadline : UINT64_MAX; }
  // Frames accepted on `ch` since its last ack.
  uint32_t unacked(uint32_t ch) const { return state_[ch].unacked; }
  size_t footprint_bytes() const {
    return state_.capacity() * sizeof(State) + now_.capacity() * sizeof(uint32_t) + later_.capacity() * sizeof(Later);
  }

 private:
  static constexpr uint8_t kNone = 0, kLater = 1, kNow = 2;
  struct State {
    uint64_t deadline = 0;
    uint32_t unacked = 0;  // data frames accepted since the last ack
    uint8_t kind = kNone;
  };
  struct Later {
    uint32_t channel;
    uint64_t deadline;
  };
  void sent(uint32_t ch) {
    state_[ch].kind = kNone;
    state_[ch].unacked = 0;
  }

  uint32_t every_;
  uint64_t delay_ns_;
  std::vector<State> state_;
  std::vector<uint32_t> now_;
  std::vector<Later> later_;  // ring, in deadline order (one delay for all)
  size_t later_head_ = 0, later_count_ = 0;
};

}  // namespace lanecast::engine::reliable
