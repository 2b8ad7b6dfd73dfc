// The simulator's bookkeeping (simulator.cc only): which peers each node
// talked to, which segments each holds, and the frames waiting at each
// receive port - laid out for groups of tens of thousands of nodes.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "algos/machine.h"
#include "algos/mix.h"
#include "algos/sim/simulator.h"

namespace lanecast::algos::sim::detail {

// `units` rounded up to a whole, odd number of cache lines of `per_line` units:
// the row stride of a bit matrix whose rows are walked in step (see BitTable).
inline size_t odd_lines(size_t units, size_t per_line) {
  size_t lines = (units + per_line - 1) / per_line;
  if (lines % 2 == 0) ++lines;
  return lines * per_line;
}

// Distinct peers of every node: a p x p bit matrix for groups up to 16384;
// above, a row per sender holding a few peers in place and turning into a
// bitmap of p bits past that (a tree's node keeps its handful in place; an
// all-to-all sender - symmetric's receivers, each sending to every other -
// costs p/8 bytes, where a hash set of pairs cost about 48 bytes a pair:
// 22 GB at 32 768 nodes x 23 968 segments). Only the sender's row is written
// during the run (one cache line per send, in the order a sender walks its
// destinations); counts() adds the receiving side once at the end. A
// per-node cache of the last peer skips repeats.
class PeerSet {
 public:
  explicit PeerSet(uint32_t p) : p_(p), last_(p, kNoRank) {
    words_ = odd_lines((size_t{p} + 63) / 64, 8);  // padded like BitTable's rows
    if (p <= kDenseUpTo) bits_.assign(size_t{p} * words_, 0);
    else rows_.resize(p);
  }
  void add(Rank a, Rank b) {
    if (last_[a] == b) return;
    last_[a] = b;
    if (rows_.empty()) return set_bit(a, b);
    Row& r = rows_[a];
    if (r.bitmap != kInPlace) return set_bit(r.bitmap, b);
    for (uint32_t i = 0; i < r.n; ++i)
      if (r.few[i] == b) return;
    if (r.n < kFew) {
      r.few[r.n++] = b;
      return;
    }
    // The row outgrew its place: a bitmap row of its own from now on.
    r.bitmap = static_cast<uint32_t>(bits_.size() / words_);
    bits_.resize(bits_.size() + words_, 0);
    for (uint32_t i = 0; i < r.n; ++i) set_bit(r.bitmap, r.few[i]);
    set_bit(r.bitmap, b);
  }
  std::vector<uint32_t> counts() const {
    std::vector<uint32_t> c(p_, 0);
    if (rows_.empty()) {
      std::vector<uint64_t> both = bits_;  // sent to (row) or received from (column)
      for (Rank a = 0; a < p_; ++a)
        each_bit(a, [&](Rank b) { both[size_t{b} * words_ + a / 64] |= uint64_t{1} << (a % 64); });  // into the copy
      for (Rank r = 0; r < p_; ++r)
        for (size_t w = 0; w < words_; ++w)
          c[r] += static_cast<uint32_t>(__builtin_popcountll(both[size_t{r} * words_ + w]));
      return c;
    }
    // a's peers: those in its row, and those that sent to a and are not in it.
    for (Rank a = 0; a < p_; ++a)
      each_in_row(a, [&](Rank b) {
        ++c[a];
        if (!in_row(b, a)) ++c[b];
      });
    return c;
  }

 private:
  static constexpr uint32_t kDenseUpTo = 16384;
  static constexpr uint32_t kFew = 6;
  static constexpr uint32_t kInPlace = UINT32_MAX;
  struct Row {
    uint32_t n = 0;
    uint32_t bitmap = kInPlace;  // its row in bits_ once it outgrew `few`
    Rank few[kFew];
  };

  // Bit b of row `row` of bits_.
  void set_bit(size_t row, Rank b) { bits_[row * words_ + b / 64] |= uint64_t{1} << (b % 64); }
  bool bit(size_t row, Rank b) const { return (bits_[row * words_ + b / 64] >> (b % 64)) & 1; }

  bool in_row(Rank a, Rank b) const {
    const Row& r = rows_[a];
    if (r.bitmap != kInPlace) return bit(r.bitmap, b);
    return std::find(r.few, r.few + r.n, b) != r.few + r.n;
  }
  template <class F>
  void each_in_row(Rank a, F&& f) const {
    const Row& r = rows_[a];
    if (r.bitmap == kInPlace) {
      for (uint32_t i = 0; i < r.n; ++i) f(r.few[i]);
      return;
    }
    each_bit(r.bitmap, f);
  }
  // Every bit set in row `row` of bits_, in order.
  template <class F>
  void each_bit(size_t row, F&& f) const {
    for (size_t w = 0; w < words_; ++w)
      for (uint64_t x = bits_[row * words_ + w]; x != 0; x &= x - 1)
        f(static_cast<Rank>(w * 64 + static_cast<size_t>(__builtin_ctzll(x))));
  }

  uint32_t p_;
  size_t words_;
  std::vector<Rank> last_;
  std::vector<uint64_t> bits_;  // the p x p matrix, or the rows that outgrew their place
  std::vector<Row> rows_;       // above kDenseUpTo nodes
};

// One bit per (node, segment): held (received, or the root's). Exactly-once
// delivery is checked without a second bit: per node, the count of deliveries
// and a multiset hash (the wrapping sum of a 64-bit mix of each delivered
// index) must equal the message's at the end; a count beyond it fails at once.
// A duplicate plus a miss passes only if two mixes collide (2^-64). Why: at
// 4096 nodes x 64 MiB a second bit doubled the table to 49 MB, beyond the L3
// cache, and its miss was the largest cost of a simulated frame. The model
// executor (algos/model) keeps the exact per-delivery check on small groups.
//
// Rows are padded to an odd number of cache lines. Pipelines keep the nodes at
// about the same segment, so the hot line of every row sits at the same offset:
// with a row of 2^k lines (or 3 x 2^k) those lines all map to a few cache sets
// and evict each other. An odd stride spreads them over all.
class HeldTable {
 public:
  void init(uint32_t rows, uint32_t cols) {
    used_ = (size_t{cols} + 63) / 64;
    words_ = odd_lines(used_, 8);
    bits_.assign(size_t{rows} * words_, 0);
  }
  bool held(Rank r, SegmentIndex s) const { return bits_[index(r, s)] >> (s % 64) & 1; }
  void set_held(Rank r, SegmentIndex s) { bits_[index(r, s)] |= uint64_t{1} << (s % 64); }
  void prefetch(Rank r, SegmentIndex s) const { __builtin_prefetch(&bits_[index(r, s)], 1); }
  void set_row_held(Rank r) {
    for (size_t w = 0; w < used_; ++w) bits_[size_t{r} * words_ + w] = ~uint64_t{0};
  }

 private:
  size_t index(Rank r, SegmentIndex s) const { return size_t{r} * words_ + s / 64; }
  size_t words_ = 0;  // row stride
  size_t used_ = 0;   // words a row uses
  std::vector<uint64_t> bits_;
};

// The multiset hash's share of a delivered index.
inline uint64_t delivery_mix(SegmentIndex s) { return mix64(uint64_t{s} + 0x9e3779b97f4a7c15ull); }

// A frame waiting for, or crossing, its receiver's rx port.
// 32 bytes: under incast (symmetric, scatter_allgather at 4096 nodes) millions
// of them wait. Ties in first_bit go by emission order, which the insertion in
// rx_enqueue keeps without storing it (a new frame goes after its equals).
struct Pending {
  Picos first_bit;  // when its first bit can enter the rx port
  Picos ready;      // its last bit cannot leave sooner (the sender's own pace)
  Rank src;
  SegmentIndex seg;
  Lane lane;
  bool before(const Pending& o) const { return first_bit < o.first_bit; }
};
static_assert(sizeof(Pending) <= 32);

struct RxPort {
  std::vector<Pending> q;  // [head, end) sorted by arrival; q[head] is scheduled in rx_queue_
  size_t head = 0;
  Picos free = 0;          // when the last committed frame left the port
  Picos tat = 0;           // with a bucket (Network::port_burst_bytes): when it would be empty again
  std::vector<uint32_t> waiters;  // tx ports paused until this queue shortens
};

}  // namespace lanecast::algos::sim::detail
