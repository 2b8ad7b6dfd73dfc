// Träff's round-optimal broadcast schedule on a circulant graph (J. L. Träff,
// "Optimal Broadcast Schedules in Logarithmic Time with Applications to
// Broadcast, All-Broadcast, Reduction and All-Reduction", ACM TOPC 2025,
// arXiv:2407.18004; earlier "Round-optimal n-Block Broadcast Schedules in
// Logarithmic Time", arXiv:2312.11236). MPICH 4 ships the same schedule as
// its circ_graph broadcast (src/mpi/coll/algorithms/circ_graph), which was
// the reference this was checked against; the code here is our own.
//
// The model: p processes, one-ported and fully bidirectional; the message is
// n blocks. With q = ceil(log2 p) and the skips skip[q] = p,
// skip[k] = ceil(skip[k+1] / 2) (so skip[0] = 1, and powers of two for p a
// power of two), in round i with k = i mod q every virtual rank r sends one
// block to r + skip[k] and receives one from r - skip[k] (mod p). n - 1 + q
// rounds broadcast all n blocks, which is the least any schedule can do.
//
// Each rank's whole schedule is 2q numbers: the block offsets recv[k] and
// send[k] of its rounds k = 0..q-1. In round i the block is the offset plus
// q * (i / q) minus a shift x that aligns the last phase with the last block;
// offsets below 0 name no block (nothing moves), offsets past n - 1 mean
// block n - 1 (the last rounds repeat it: a receiver that has it already
// takes a copy, which circulant_copy_round lets a sender leave out).
#pragma once

#include <array>
#include <cstdint>

#include "algos/types.h"

namespace lanecast::algos::topology {

inline constexpr uint32_t kMaxCirculantRounds = 32;  // q for any p < 2^32

// ceil(log2 p): rounds per phase (0 for p = 1).
constexpr uint32_t circulant_phase(uint32_t p) {
  uint32_t q = 0;
  while (q < 32 && (uint64_t{1} << q) < p) ++q;
  return q;
}

struct CirculantSchedule {
  uint32_t p = 1;  // group size
  uint32_t q = 0;  // rounds per phase
  // skip[k] for k = 0..q; skip[q] = p.
  std::array<uint32_t, kMaxCirculantRounds + 1> skip{};
  // Block offsets of this rank's rounds k = 0..q-1 (see above); the root
  // receives nothing, and sends to the root are never made.
  std::array<int32_t, kMaxCirculantRounds> recv{}, send{};
};

// The skips of a group of p (recv and send left empty).
CirculantSchedule circulant_skips(uint32_t p);

// The schedule of virtual rank r (the root is 0) in a group of p. The send
// offsets are the receive offsets of each round's target, so a rank's whole
// schedule costs q + 1 receive schedules: O(q^3).
CirculantSchedule circulant_schedule(uint32_t p, Rank r);

// The receive offsets of virtual rank r (0 < r < p) for rounds 0..q-1,
// O(q^2).
void circulant_receives(const CirculantSchedule& skips, Rank r, std::array<int32_t, kMaxCirculantRounds>& recv);

// What rank r sends in round k is what its round-k target r + skip[k]
// receives then: calls f(k, to, its receive offsets) for every round whose
// target is not the root (nothing is ever sent to the root). A rank's sends
// cost q receive schedules.
template <class F>
void for_each_circulant_target(const CirculantSchedule& skips, Rank r, F&& f) {
  std::array<int32_t, kMaxCirculantRounds> theirs{};
  for (uint32_t k = 0; k < skips.q; ++k) {
    const Rank to = static_cast<Rank>((uint64_t{r} + skips.skip[k]) % skips.p);
    if (to == 0) continue;
    circulant_receives(skips, to, theirs);
    f(k, to, theirs);
  }
}

// The block rank r sends first, in round k where skip[k] <= r < skip[k+1]:
// the last skip of r's greedy sum of skips (q for the root).
uint32_t circulant_baseblock(const CirculantSchedule& skips, Rank r);

// The rounds of a broadcast of n >= 1 blocks: i runs over [first, end).
struct CirculantRounds {
  uint32_t q = 0;
  uint32_t first = 0;  // the shift x: (q - (n - 1) mod q) mod q
  uint64_t end = 0;    // first + n - 1 + q

  CirculantRounds(uint32_t q_, uint32_t n) : q(q_) {
    first = q == 0 ? 0 : (q - (n - 1) % q) % q;
    end = first + uint64_t{n} - 1 + q;
  }
  uint32_t k(uint64_t i) const { return static_cast<uint32_t>(i % q); }
  // The block named by `offset` in round i before it is clamped to n - 1;
  // negative: none.
  int64_t block(int32_t offset, uint64_t i) const {
    return int64_t{offset} + int64_t(q) * int64_t(i / q) - first;
  }
};

// The round in which virtual rank `to` receives block n - 1 for the first
// time, given its receive offsets: every later round whose offset names a
// block past n - 1 would only give it a copy.
uint64_t circulant_last_block_round(const CirculantRounds& rounds, const std::array<int32_t, kMaxCirculantRounds>& recv,
                                    uint32_t n);

}  // namespace lanecast::algos::topology
