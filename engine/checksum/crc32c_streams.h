// Several crc32 streams over split stretches of the buffer, joined with a
// carry-less multiply (Intel, "Fast CRC Computation for iSCSI Polynomial Using
// CRC32 Instruction", 2011). One stream waits 3 cycles for each crc32 result;
// N independent streams keep the unit busy: 3 saturate a core that starts one
// crc32 per cycle (most x86 cores), 6 one that starts two (AMD Zen 5).
#pragma once

#if defined(__x86_64__)

#include <cassert>

#include "engine/checksum/crc32c_math.h"
#include "engine/checksum/crc32c_x86.h"

namespace lanecast::engine::crc32c_x86 {

// N stretches of `stride_qwords` qwords, back to back from `at`, one qword of
// each per round().
template <size_t N, bool kCopy>
class Streams {
 public:
  static_assert(N >= 2);

  // Stream 0 continues from `first_reg`; the others start from zero.
  Streams(Reader<kCopy> in, size_t at, size_t stride_qwords, uint32_t first_reg = 0)
      : in_(in), at_(at), stride_qwords_(stride_qwords), reg_{first_reg} {}

  LANECAST_TARGET_CRC32 void round() {
    const size_t stride = 8 * stride_qwords_;
#pragma GCC unroll 8
    for (size_t i = 0; i < N; ++i) reg_[i] = _mm_crc32_u64(reg_[i], in_.template take<uint64_t>(at_ + i * stride));
    at_ += 8;
  }

  // Adds stream i to `sum` shifted over the N-1-i stretches after it, and
  // returns the register after the last stretch.
  LANECAST_TARGET_CRC32_CLMUL uint32_t join(ShiftSum& sum) const {
    assert((N - 1) * stride_qwords_ <= crc32c_math::kMaxShiftQwords);
#pragma GCC unroll 8
    for (size_t i = 0; i < N - 1; ++i)
      sum.add(static_cast<uint32_t>(reg_[i]), crc32c_math::kShiftByQwords[(N - 1 - i) * stride_qwords_]);
    return sum.plus(static_cast<uint32_t>(reg_[N - 1]));
  }

  // Adds every stream to `sum`, shifted also over `after_qwords` (>= 1) more
  // qwords that follow the last stretch.
  LANECAST_TARGET_CRC32_CLMUL void add_to(ShiftSum& sum, size_t after_qwords) const {
    assert(after_qwords >= 1 && (N - 1) * stride_qwords_ + after_qwords <= crc32c_math::kMaxShiftQwords);
#pragma GCC unroll 8
    for (size_t i = 0; i < N; ++i)
      sum.add(static_cast<uint32_t>(reg_[i]),
              crc32c_math::kShiftByQwords[(N - 1 - i) * stride_qwords_ + after_qwords]);
  }

 private:
  Reader<kCopy> in_;
  size_t at_;
  size_t stride_qwords_;
  uint64_t reg_[N];
};

// With fewer qwords than this in the streams, the join (a pclmulqdq per
// stream and a crc32) costs more than the streams save (measured on Zen 5:
// three streams lose to one at 64 bytes and win at 96).
inline constexpr size_t kMinStreamedQwords = 9;

// [at, at + len) as N equal streams and a tail of under 8*N bytes on one
// stream, continuing from `reg`. Stretches fit the shift table while
// N * stride <= kMaxShiftQwords, which callers ensure by len.
template <size_t N, bool kCopy>
LANECAST_TARGET_CRC32_CLMUL inline uint32_t streams_then_tail(uint32_t reg, Reader<kCopy> in, size_t at,
                                                              size_t len) {
  constexpr size_t kMinStrideQwords = (kMinStreamedQwords + N - 1) / N;
  if (len < 8 * N * kMinStrideQwords) return single_stream(reg, in, at, len);
  const size_t stride_qwords = len / (8 * N);
  Streams<N, kCopy> streams(in, at, stride_qwords, reg);
  for (size_t r = 0; r < stride_qwords; ++r) streams.round();
  ShiftSum sum;
  reg = streams.join(sum);
  const size_t done = 8 * N * stride_qwords;
  return single_stream(reg, in, at + done, len - done);
}

// Any length: first the part that is not a whole number of chunks, by
// streams_then_tail, then whole chunks of N streams of kChunkStrideQwords. A
// chunk's streams start from zero and the running register joins them shifted
// over the chunk, so a chunk never waits for the previous chunk's join.
template <size_t N, size_t kChunkStrideQwords, bool kCopy>
LANECAST_TARGET_CRC32_CLMUL inline uint32_t interleaved(uint32_t reg, Reader<kCopy> in, size_t len) {
  static_assert(N * kChunkStrideQwords <= crc32c_math::kMaxShiftQwords);
  constexpr size_t kChunkBytes = 8 * N * kChunkStrideQwords;
  const size_t lead = len % kChunkBytes;
  reg = streams_then_tail<N>(reg, in, 0, lead);
  for (size_t at = lead; at < len; at += kChunkBytes) {
    Streams<N, kCopy> streams(in, at, kChunkStrideQwords);
    for (size_t r = 0; r < kChunkStrideQwords; ++r) streams.round();
    ShiftSum sum;
    sum.add(reg, crc32c_math::kShiftByQwords[N * kChunkStrideQwords]);
    reg = streams.join(sum);
  }
  return reg;
}

}  // namespace lanecast::engine::crc32c_x86

#endif  // __x86_64__
