// The path for x86 CPUs with AVX-512 and VPCLMULQDQ.
//
// Checksum alone, from 1280 bytes: 512-bit folding (crc32c_fold.h) over about
// half of the bytes while six crc32 streams (crc32c_streams.h) run over the
// other half, in one loop. On AMD Zen 5 each moves about 16 bytes per cycle on
// its own (a 512-bit pclmulqdq issues every 2 cycles and a fold needs two;
// crc32 issues twice per cycle with latency 3), and they use different
// execution units, so together they move about 22 (measured, 64 KiB).
//
// Checksum and copy, and checksums of 256 to 1279 bytes: folding alone. A fold
// reads 64 bytes into a register that the copy stores as is, so the copy costs
// almost nothing; crc32 streams need a scalar store per 8 bytes, and on Zen 5
// those stores cost more than the streams gain (measured at 1400 bytes: 41 ns
// with streams, 29 ns folding alone).
//
// Under 256 bytes: six streams, or one under 96 bytes.
//
// The splits are tuned for Zen 5 and stay correct, if less balanced, anywhere.
#include "engine/checksum/crc32c_kernels.h"

#if defined(__x86_64__)

#include <cassert>

#include "engine/checksum/crc32c_fold.h"
#include "engine/checksum/crc32c_math.h"
#include "engine/checksum/crc32c_streams.h"

namespace lanecast::engine::crc32c_kernels {
namespace {

using crc32c_math::kShiftByQwords;
using crc32c_x86::Fold;
using crc32c_x86::kFoldBlock;
using crc32c_x86::kFoldRound;
using crc32c_x86::Reader;
using crc32c_x86::ShiftSum;
using crc32c_x86::single_stream;
using crc32c_x86::Streams;

constexpr size_t kStreams = 6;
constexpr size_t kStreamBytes = 8 * kStreams;    // one round of the six streams
constexpr size_t kStreamRoundsPerFoldRound = 5;  // 5 x 3 cycles of crc32 per ~16 cycles of folding

// ---- folding alone: the checksum with copy, and short checksums ----

// Whole rounds, then up to 3 blocks, folded; the tail's qwords on one stream
// alongside (joined by a shift); its last bytes after the join. Under one
// round, streams only.
template <bool kCopy>
__attribute__((noinline)) LANECAST_TARGET_AVX512 uint32_t fold_alone(uint32_t reg, Reader<kCopy> in, size_t len) {
  if (len < kFoldRound) return crc32c_x86::streams_then_tail<kStreams>(reg, in, 0, len);
  const size_t tail_at = len - len % kFoldBlock;
  const size_t tail_qwords = (len % kFoldBlock) / 8;
  const uint32_t tail = tail_qwords != 0 ? single_stream(0, in, tail_at, 8 * tail_qwords) : 0;

  Fold<kCopy> fold(in, 0, reg);
  for (size_t r = 1; r < len / kFoldRound; ++r) fold.round();
  fold.last_blocks((len % kFoldRound) / kFoldBlock);
  reg = fold.finish();
  if (tail_qwords != 0) {
    ShiftSum sum;
    sum.add(reg, kShiftByQwords[tail_qwords]);
    reg = sum.plus(tail);
  }
  return single_stream(reg, in, len - len % 8, len % 8);
}

// ---- checksum alone: fold and streams side by side ----

// The register after [at, at + fold_rounds * 256 + 48 * stride_qwords +
// 8 * tail_qwords): folding over the first part, six streams over the second,
// one more stream over the tail qwords, all independent until the join. `reg`
// enters the fold; pieces before the region that the caller has added to `sum`
// are joined with it.
template <bool kCopy>
LANECAST_TARGET_AVX512 uint32_t fold_and_streams(uint32_t reg, Reader<kCopy> in, size_t at, size_t fold_rounds,
                                                 size_t stride_qwords, size_t tail_qwords, ShiftSum& sum) {
  assert(fold_rounds >= 1 && stride_qwords >= 1);
  const size_t streams_at = at + fold_rounds * kFoldRound;
  const size_t tail_at = streams_at + kStreamBytes * stride_qwords;
  // First in program order so the out-of-order core runs it under the rest.
  const uint32_t tail = tail_qwords != 0 ? single_stream(0, in, tail_at, 8 * tail_qwords) : 0;

  Fold<kCopy> fold(in, at, reg);
  Streams<kStreams, kCopy> streams(in, streams_at, stride_qwords);
  size_t fold_left = fold_rounds - 1;
  size_t stream_left = stride_qwords;
  for (; fold_left > 0 && stream_left >= kStreamRoundsPerFoldRound;
       --fold_left, stream_left -= kStreamRoundsPerFoldRound) {
    fold.round();
    for (size_t r = 0; r < kStreamRoundsPerFoldRound; ++r) streams.round();
  }
  for (; fold_left > 0; --fold_left) fold.round();
  for (; stream_left > 0; --stream_left) streams.round();

  sum.add(fold.finish(), kShiftByQwords[kStreams * stride_qwords + tail_qwords]);
  if (tail_qwords == 0) return streams.join(sum);
  streams.add_to(sum, tail_qwords);
  return sum.plus(tail);
}

// Below this, folding alone is as fast (measured on Zen 5: equal at 1280 to
// 1344 bytes, folding alone up to 20% faster below, 10% slower at 1400).
constexpr size_t kMinFoldAndStreamsBytes = 1280;

// Any length under a chunk: a fold round per 512 bytes, the rest in streams
// (shorter than a chunk's, so their shifts fit the table), under 8 bytes last.
template <bool kCopy>
LANECAST_TARGET_AVX512 uint32_t lead_region(uint32_t reg, Reader<kCopy> in, size_t len) {
  if (len < kMinFoldAndStreamsBytes) return fold_alone(reg, in, len);
  const size_t fold_rounds = (len + kFoldRound) / (2 * kFoldRound);
  const size_t rest = len - fold_rounds * kFoldRound;
  const size_t stride_qwords = rest / kStreamBytes;
  const size_t tail_qwords = (rest % kStreamBytes) / 8;
  ShiftSum sum;
  reg = fold_and_streams(reg, in, 0, fold_rounds, stride_qwords, tail_qwords, sum);
  return single_stream(reg, in, len - len % 8, len % 8);
}

// Long buffers go in chunks of 6 fold rounds and 6 streams of 256 bytes.
constexpr size_t kChunkFoldRounds = 6;
constexpr size_t kChunkStrideQwords = 32;
constexpr size_t kChunkBytes = kChunkFoldRounds * kFoldRound + kStreamBytes * kChunkStrideQwords;
constexpr uint32_t kShiftOverChunk = crc32c_math::shift_constant(kChunkBytes);
static_assert(kStreams * kChunkStrideQwords <= crc32c_math::kMaxShiftQwords);

// The part that is not a whole number of chunks first, then the chunks. A
// chunk starts from zero and the running register joins it shifted over the
// chunk, so no chunk waits for the previous one's reduction.
template <bool kCopy>
__attribute__((noinline)) LANECAST_TARGET_AVX512 uint32_t fold_beside_streams(uint32_t reg, Reader<kCopy> in, size_t len) {
  const size_t lead = len % kChunkBytes;
  reg = lead_region(reg, in, lead);
  for (size_t at = lead; at < len; at += kChunkBytes) {
    ShiftSum sum;
    sum.add(reg, kShiftOverChunk);
    reg = fold_and_streams(0, in, at, kChunkFoldRounds, kChunkStrideQwords, 0, sum);
  }
  return reg;
}

// Short lengths (frame headers among them) take the streams' entry, which
// falls to one stream below 96 bytes; the long paths stay out of line
// (noinline) so their saved registers and chunk arithmetic cost a short call
// nothing (measured: 64 bytes went from 10.5 to 7.2 ns).
LANECAST_TARGET_AVX512 uint32_t avx512_update(uint32_t reg, const uint8_t* src, size_t len) {
  const Reader<false> in{src, nullptr};
  if (len < kFoldRound) return crc32c_x86::streams_then_tail<kStreams>(reg, in, 0, len);
  return fold_beside_streams(reg, in, len);
}

LANECAST_TARGET_AVX512 uint32_t avx512_copy(uint32_t reg, uint8_t* dst, const uint8_t* src, size_t len) {
  const Reader<true> in{src, dst};
  if (len < kFoldRound) return crc32c_x86::streams_then_tail<kStreams>(reg, in, 0, len);
  return fold_alone(reg, in, len);
}

}  // namespace

const Kernel kAvx512{avx512_update, avx512_copy};

}  // namespace lanecast::engine::crc32c_kernels

#endif  // __x86_64__
