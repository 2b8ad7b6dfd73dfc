// The random part of a FaultPort: per link a stream of draws (SplitMix64:
// 8 bytes of state, so a member with 1024 peers keeps them all), and a
// frame's fate drawn from it in a fixed order. What happens to a link's
// frames is then a function of the seed and that link's frames alone - not of
// time, nor of other links' traffic - so a run repeats exactly for a seed.
//
// Draws per frame, each only when its fault is on:
//   Gilbert-Elliott: loss in the current state, then the state's step;
//   Bernoulli loss; duplication (not for a lost frame);
//   then for the frame and for its duplicate, in turn: corruption (and its
//   position and bits), reordering, jitter.
#pragma once

#include <cmath>
#include <cstdint>

#include "drivers/fault/fault_options.h"

namespace lanecast::drivers::fault {

class Stream {
 public:
  explicit Stream(uint64_t seed = 0) : s_(seed) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n), without division.
  uint64_t below(uint64_t n) {
    __extension__ using u128 = unsigned __int128;
    return static_cast<uint64_t>((static_cast<u128>(next()) * n) >> 64);
  }

 private:
  uint64_t s_;
};

// A probability as a fraction of 2^64; 1 is "always".
struct Chance {
  uint64_t t = 0;
  static Chance of(double p) {
    Chance c;
    if (p >= 1) c.t = UINT64_MAX;
    else if (p > 0) c.t = static_cast<uint64_t>(std::ldexp(p, 64));  // < 2^64 - 2^11
    return c;
  }
  bool on() const { return t != 0; }
  bool hit(uint64_t draw) const { return t == UINT64_MAX || draw < t; }
};

// A FaultProfile ready for the datapath.
struct Compiled {
  Chance loss, enter, leave, loss_good, loss_bad, reorder, duplicate, corrupt;
  bool burst = false;
  uint32_t reorder_gap = 0;
  uint64_t delay_ns = 0, jitter_ns = 0;

  static Compiled of(const FaultProfile& p) {
    Compiled c;
    c.loss = Chance::of(p.loss);
    c.burst = p.burst_enter > 0;
    c.enter = Chance::of(p.burst_enter);
    c.leave = Chance::of(p.burst_leave);
    c.loss_good = Chance::of(p.burst_loss_good);
    c.loss_bad = Chance::of(p.burst_loss_bad);
    c.reorder = Chance::of(p.reorder);
    c.reorder_gap = p.reorder_gap;
    c.duplicate = Chance::of(p.duplicate);
    c.corrupt = Chance::of(p.corrupt);
    c.delay_ns = p.delay_ns;
    c.jitter_ns = p.jitter_ns;
    return c;
  }
  bool holds() const { return delay_ns > 0 || jitter_ns > 0; }
};

// What becomes of one copy of a frame.
struct CopyFate {
  bool corrupt = false;
  uint64_t where = 0;  // the position's draw (scaled to the frame's length later)
  uint8_t mask = 0;    // XORed into the byte: never 0
  bool reorder = false;
  uint64_t hold_ns = 0;  // delay + jitter
};

struct Fate {
  bool burst_lost = false, lost = false;
  bool duplicate = false;
  CopyFate copy[2];  // the frame, its duplicate
};

// One link's state: its stream and its Gilbert-Elliott state.
struct LinkDraws {
  Stream stream;
  bool bad = false;

  Fate draw(const Compiled& p) {
    Fate f;
    if (p.burst) {
      f.burst_lost = (bad ? p.loss_bad : p.loss_good).hit(stream.next());
      const bool flip = (bad ? p.leave : p.enter).hit(stream.next());
      bad = bad != flip;
    }
    if (p.loss.on()) f.lost = p.loss.hit(stream.next()) && !f.burst_lost;
    if (f.burst_lost || f.lost) return f;
    if (p.duplicate.on()) f.duplicate = p.duplicate.hit(stream.next());
    for (int i = 0; i < (f.duplicate ? 2 : 1); ++i) {
      CopyFate& c = f.copy[i];
      if (p.corrupt.on() && p.corrupt.hit(stream.next())) {
        c.corrupt = true;
        c.where = stream.next();
        c.mask = static_cast<uint8_t>(1 + stream.below(255));
      }
      if (p.reorder.on()) c.reorder = p.reorder.hit(stream.next());
      c.hold_ns = p.delay_ns + (p.jitter_ns > 0 ? stream.below(p.jitter_ns + 1) : 0);
    }
    return f;
  }
};

}  // namespace lanecast::drivers::fault
