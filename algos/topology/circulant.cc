#include "algos/topology/circulant.h"

#include <algorithm>
#include <bit>
#include <stdexcept>

namespace lanecast::algos::topology {

uint32_t circulant_baseblock(const CirculantSchedule& s, Rank r) {
  if (r == 0) return s.q;
  // Greedy from the largest skip: r < skip[k+1] <= 2 skip[k] keeps the rest
  // below skip[k], so the sum ends exactly, at the last skip taken.
  uint32_t rest = r;
  for (uint32_t k = s.q; k-- > 0;) {
    if (rest < s.skip[k]) continue;
    rest -= s.skip[k];
    if (rest == 0) return k;
  }
  throw std::logic_error("circulant: rank outside the group");
}

namespace {

// Bit e set: some rank in [first, last] (0 < first <= last < p) has
// baseblock e. A rank's baseblock is e exactly when what is left of it after
// the greedy took every skip above e is skip[e]; so fold the window the way
// the greedy folds a rank - skip by skip, from the largest - and look for
// skip[e] before folding e. One pass answers every e: O(q) per window.
//
// Folding at skip S maps x >= S to x - S; every value is below 2S. A run
// [a, b] across S becomes [a, S - 1] and [0, b - S], so the folded window is
// always a prefix [0, c] and at most one run [a, b] besides: two numbers each.
uint64_t baseblocks_in(const CirculantSchedule& s, uint64_t first, uint64_t last) {
  int64_t prefix = -1;  // [0, prefix]; -1: none
  int64_t a = static_cast<int64_t>(first), b = static_cast<int64_t>(last);  // a > b: none
  uint64_t present = 0;
  for (uint32_t j = s.q; j-- > 0;) {
    const int64_t skip = s.skip[j];
    if (skip <= prefix || (a <= skip && skip <= b)) present |= uint64_t{1} << j;
    if (prefix >= skip) prefix = skip - 1;  // [0, prefix] folds onto [0, skip - 1]
    if (a <= b && b >= skip) {
      if (a >= skip) {
        a -= skip, b -= skip;
      } else {
        prefix = std::max(prefix, b - skip);
        b = skip - 1;
      }
    }
    if (a <= b && a <= prefix + 1) prefix = std::max(prefix, b), a = 1, b = 0;  // touches: one prefix
  }
  return present;
}

}  // namespace

// Rank r receives in round k from r - skip[k]. The windows
// W_k = (r - skip[k+1], r - skip[k]] (mod p) tile the ring without r; W_k is
// where r's round-k sender got what it holds, and r takes the largest
// baseblock found in W_k that it has not taken yet (the root counts as
// baseblock q: the block of this phase, r's own baseblock). Only when W_k has
// none left does its lower end r - skip[k+1] count. (Träff 2024, the receive
// schedule. MPICH's circ_graph finds the largest baseblock by a depth-first
// scan over sums of skips that skips every index taken once, also inside a
// sum; from p = 33 on that gives receive schedules its own send schedules do
// not match - tests/algos/circulant_schedule_test.cc plays every group.)
void circulant_receives(const CirculantSchedule& s, Rank r, std::array<int32_t, kMaxCirculantRounds>& recv) {
  const uint32_t q = s.q;
  const uint32_t base = circulant_baseblock(s, r);
  uint64_t taken = uint64_t{1} << base;
  for (uint32_t k = 0; k < q; ++k) {
    const int64_t lo = int64_t{r} - s.skip[k + 1], hi = int64_t{r} - s.skip[k];
    uint32_t e;
    if (lo < 0 && hi >= 0) {
      e = q;  // the root is in W_k: this phase's block
    } else {
      const int64_t shift = hi < 0 ? s.p : 0;
      const uint64_t first = static_cast<uint64_t>(lo + shift + 1), last = static_cast<uint64_t>(hi + shift);
      const uint64_t left = baseblocks_in(s, first, last) & ~taken;
      if (left != 0) {
        e = static_cast<uint32_t>(63 - std::countl_zero(left));
      } else {
        const uint64_t lower = first - 1;
        e = lower == 0 ? q : circulant_baseblock(s, static_cast<Rank>(lower));
        if (e == q || (taken >> e & 1) != 0) throw std::logic_error("circulant: no block left for a round");
      }
    }
    taken |= uint64_t{1} << e;
    recv[k] = e == q ? static_cast<int32_t>(base) : static_cast<int32_t>(e) - static_cast<int32_t>(q);
  }
}

CirculantSchedule circulant_skips(uint32_t p) {
  if (p == 0) throw std::invalid_argument("circulant: a group needs at least one rank");
  CirculantSchedule s;
  s.p = p;
  s.q = circulant_phase(p);
  s.skip[s.q] = p;
  for (uint32_t k = s.q; k-- > 0;) s.skip[k] = s.skip[k + 1] / 2 + (s.skip[k + 1] & 1);
  return s;
}

CirculantSchedule circulant_schedule(uint32_t p, Rank r) {
  if (p == 0 || r >= p) throw std::invalid_argument("circulant: rank outside the group");
  CirculantSchedule s = circulant_skips(p);
  if (s.q == 0) return s;
  if (r != 0) circulant_receives(s, r, s.recv);
  s.send.fill(INT32_MIN);  // rounds whose target is the root: never sent, it holds everything
  for_each_circulant_target(s, r, [&s](uint32_t k, Rank, const auto& theirs) { s.send[k] = theirs[k]; });
  return s;
}

uint64_t circulant_last_block_round(const CirculantRounds& rounds, const std::array<int32_t, kMaxCirculantRounds>& recv,
                                    uint32_t n) {
  const int64_t q = rounds.q, first = rounds.first;
  uint64_t best = UINT64_MAX;
  for (uint32_t k = 0; k < rounds.q; ++k) {
    // The least phase in which offset recv[k] names a block >= n - 1.
    const int64_t need = int64_t{n} - 1 + first - recv[k];
    int64_t phase = need <= 0 ? 0 : (need + q - 1) / q;
    if (phase * q + k < first) phase = (first - k + q - 1) / q;  // rounds start at `first`
    const uint64_t i = static_cast<uint64_t>(phase * q + k);
    if (i < best) best = i;
  }
  return best;
}

}  // namespace lanecast::algos::topology
