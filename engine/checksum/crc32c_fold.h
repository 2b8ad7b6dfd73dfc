// Carry-less folding of 512-bit registers (Intel, "Fast CRC Computation for
// Generic Polynomials Using PCLMULQDQ Instruction", Gopal et al., 2009, with
// VPCLMULQDQ doing four 128-bit lanes at once). A 128-bit chunk X followed by D
// bits of message is congruent to X * x^D mod P, so each accumulator is moved
// forward with two carry-less multiplies and XORed onto the data D bits later;
// at the end everything is moved onto the last 16 bytes, whose CRC from zero
// (two crc32 instructions) is the register after the folded bytes.
#pragma once

#if defined(__x86_64__)

#include <immintrin.h>

#include <array>
#include <cstddef>
#include <cstdint>

#include "engine/checksum/crc32c_math.h"
#include "engine/checksum/crc32c_x86.h"

#define LANECAST_TARGET_AVX512 __attribute__((target("avx512f,avx512vl,vpclmulqdq,pclmul,sse4.2")))

namespace lanecast::engine::crc32c_x86 {

inline constexpr size_t kFoldBlock = 64;  // bytes in a 512-bit register
// A fold's latency (~8 cycles on Zen 5) over its issue interval (~4), doubled
// for margin: enough independent accumulators that the multiplier never waits.
inline constexpr size_t kFoldAccumulators = 4;
inline constexpr size_t kFoldRound = kFoldBlock * kFoldAccumulators;

// Fold constants for the four 128-bit lanes of a register. In each lane the low
// qword multiplies the lane's first 8 bytes, the high qword its last 8.
struct alignas(64) LaneConstants {
  uint64_t q[8];
};

namespace fold_detail {

constexpr LaneConstants same_in_every_lane(crc32c_math::FoldPair p) {
  return LaneConstants{{p.first, p.second, p.first, p.second, p.first, p.second, p.first, p.second}};
}

// For an accumulator whose last block lies `blocks_after` blocks before the
// end: lane l moves forward over those blocks and the 3 - l lanes after it. The
// very last lane stays (zero constant; added unfolded).
constexpr LaneConstants onto_last_lane(size_t blocks_after) {
  LaneConstants c{};
  for (size_t lane = 0; lane < 4; ++lane) {
    const uint64_t bits = 8 * (blocks_after * kFoldBlock + (3 - lane) * 16);
    if (bits == 0) continue;
    c.q[2 * lane] = crc32c_math::fold_pair(bits).first;
    c.q[2 * lane + 1] = crc32c_math::fold_pair(bits).second;
  }
  return c;
}

}  // namespace fold_detail

inline constexpr LaneConstants kFoldOverRound =
    fold_detail::same_in_every_lane(crc32c_math::fold_pair(8 * kFoldRound));
inline constexpr std::array<LaneConstants, kFoldAccumulators> kFoldOntoLastLane = {
    fold_detail::onto_last_lane(0), fold_detail::onto_last_lane(1), fold_detail::onto_last_lane(2),
    fold_detail::onto_last_lane(3)};

// Reads 64 bytes (and, if copying, writes them to dst): one load for both.
template <bool kCopy>
LANECAST_TARGET_AVX512 inline __m512i take_block(Reader<kCopy> in, size_t at) {
  const __m512i v = _mm512_loadu_si512(in.src + at);
  if constexpr (kCopy) _mm512_storeu_si512(in.dst + at, v);
  return v;
}

// acc * x^D xor data, for the D the constants were made for.
LANECAST_TARGET_AVX512 inline __m512i fold_onto(__m512i acc, __m512i constants, __m512i data) {
  return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(acc, constants, 0x00),
                                   _mm512_clmulepi64_epi128(acc, constants, 0x11), data, 0x96);  // a ^ b ^ c
}

// Four accumulators over consecutive blocks: accumulator j takes blocks
// j, j + 4, j + 8, ... from `at`.
template <bool kCopy>
class Fold {
 public:
  // Loads the first round of 256 bytes; `reg` enters XORed onto the first 4.
  LANECAST_TARGET_AVX512 Fold(Reader<kCopy> in, size_t at, uint32_t reg) : in_(in), at_(at) {
    for (size_t j = 0; j < kFoldAccumulators; ++j) acc_[j] = take_block(in_, at_ + j * kFoldBlock);
    acc_[0] = _mm512_xor_si512(acc_[0], _mm512_maskz_set1_epi32(1, static_cast<int>(reg)));
    at_ += kFoldRound;
  }

  // The next 256 bytes.
  LANECAST_TARGET_AVX512 void round() {
    const __m512i k = _mm512_load_si512(kFoldOverRound.q);
    for (size_t j = 0; j < kFoldAccumulators; ++j)
      acc_[j] = fold_onto(acc_[j], k, take_block(in_, at_ + j * kFoldBlock));
    at_ += kFoldRound;
  }

  // The next `blocks` (< 4) blocks, into accumulators 0 .. blocks-1; nothing
  // may follow but finish().
  LANECAST_TARGET_AVX512 void last_blocks(size_t blocks) {
    const __m512i k = _mm512_load_si512(kFoldOverRound.q);
    // Constant indices: a loop to a run-time bound would keep acc_ in memory.
    if (blocks > 0) acc_[0] = fold_onto(acc_[0], k, take_block(in_, at_));
    if (blocks > 1) acc_[1] = fold_onto(acc_[1], k, take_block(in_, at_ + kFoldBlock));
    if (blocks > 2) acc_[2] = fold_onto(acc_[2], k, take_block(in_, at_ + 2 * kFoldBlock));
    newest_ = (blocks + kFoldAccumulators - 1) % kFoldAccumulators;
  }

  // The register after the folded bytes.
  LANECAST_TARGET_AVX512 uint32_t finish() const {
    // Oldest to newest last block; the rotation comes from last_blocks().
    switch (newest_) {
      case 0:
        return finish_in_order(acc_[1], acc_[2], acc_[3], acc_[0]);
      case 1:
        return finish_in_order(acc_[2], acc_[3], acc_[0], acc_[1]);
      case 2:
        return finish_in_order(acc_[3], acc_[0], acc_[1], acc_[2]);
      default:
        return finish_in_order(acc_[0], acc_[1], acc_[2], acc_[3]);
    }
  }

 private:
  // Accumulators whose last blocks are 3, 2, 1 and 0 blocks before the end:
  // every lane moved onto the last 16 bytes at once, then the lanes XORed.
  LANECAST_TARGET_AVX512 static uint32_t finish_in_order(__m512i a3, __m512i a2, __m512i a1, __m512i a0) {
    __m512i sum = _mm512_maskz_mov_epi64(0xC0, a0);  // the last 16 bytes stay where they are
    const __m512i accs[] = {a0, a1, a2, a3};
    for (size_t e = 0; e < kFoldAccumulators; ++e) {
      const __m512i k = _mm512_load_si512(kFoldOntoLastLane[e].q);
      sum = _mm512_ternarylogic_epi64(sum, _mm512_clmulepi64_epi128(accs[e], k, 0x00),
                                      _mm512_clmulepi64_epi128(accs[e], k, 0x11), 0x96);
    }
    // The zero-masking extracts: GCC 12 reports the _mm256_undefined_*() inside
    // the plain ones as uninitialised (GCC bug 105593).
    const __m256i half = _mm256_xor_si256(_mm512_maskz_extracti64x4_epi64(0xF, sum, 0),
                                          _mm512_maskz_extracti64x4_epi64(0xF, sum, 1));
    const __m128i last = _mm_xor_si128(_mm256_castsi256_si128(half), _mm256_extracti128_si256(half, 1));
    const uint64_t reg = _mm_crc32_u64(0, static_cast<uint64_t>(_mm_cvtsi128_si64(last)));
    return static_cast<uint32_t>(_mm_crc32_u64(reg, static_cast<uint64_t>(_mm_extract_epi64(last, 1))));
  }

  Reader<kCopy> in_;
  size_t at_;
  size_t newest_ = kFoldAccumulators - 1;
  __m512i acc_[kFoldAccumulators];
};

}  // namespace lanecast::engine::crc32c_x86

#endif  // __x86_64__
