// Building blocks of the x86 paths: reading (and optionally copying) the bytes,
// one crc32 stream with its short tail, and joining the CRCs of consecutive
// pieces with pclmulqdq. Header-only so every path inlines them under its own
// target attribute; a caller's target must include the callee's.
#pragma once

#if defined(__x86_64__)

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

// Per-function instruction sets (no global -m flags): the binary runs on any
// x86-64 and start-up picks the paths the CPU has.
#define LANECAST_TARGET_CRC32 __attribute__((target("sse4.2")))
#define LANECAST_TARGET_CRC32_CLMUL __attribute__((target("sse4.2,pclmul")))

namespace lanecast::engine::crc32c_x86 {

// Reads source bytes by offset. A copying reader writes every value it reads to
// the same offset of dst, so the one read serves the checksum and the copy.
template <bool kCopy>
struct Reader {
  const uint8_t* src;
  uint8_t* dst;  // nullptr and never touched unless kCopy

  template <typename T>
  T take(size_t at) const {
    T v;
    std::memcpy(&v, src + at, sizeof v);
    if constexpr (kCopy) std::memcpy(dst + at, &v, sizeof v);
    return v;
  }
};

// One crc32 stream over [at, at + len): a qword per instruction, then 4, 2, 1
// bytes. Bound by the instruction's latency (3 cycles per qword).
template <bool kCopy>
LANECAST_TARGET_CRC32 inline uint32_t single_stream(uint32_t reg, Reader<kCopy> in, size_t at, size_t len) {
  const size_t end = at + len;
  uint64_t r = reg;
  for (; end - at >= 8; at += 8) r = _mm_crc32_u64(r, in.template take<uint64_t>(at));
  uint32_t r32 = static_cast<uint32_t>(r);
  if (end - at >= 4) {
    r32 = _mm_crc32_u32(r32, in.template take<uint32_t>(at));
    at += 4;
  }
  if (end - at >= 2) {
    r32 = _mm_crc32_u16(r32, in.template take<uint16_t>(at));
    at += 2;
  }
  if (end - at >= 1) r32 = _mm_crc32_u8(r32, in.template take<uint8_t>(at));
  return r32;
}

// Accumulates sum(crc_i * x^(8 * bytes_i)) mod P for pieces each followed by
// bytes_i more bytes of the message, given constants shift_constant(bytes_i)
// from crc32c_math.h: one pclmulqdq per piece and a single crc32 reduction for
// the whole sum (the reduction is linear, so the products XOR before it).
class ShiftSum {
 public:
  LANECAST_TARGET_CRC32_CLMUL void add(uint32_t crc, uint32_t shift_constant) {
    const __m128i product = _mm_clmulepi64_si128(_mm_cvtsi32_si128(static_cast<int>(crc)),
                                                 _mm_cvtsi32_si128(static_cast<int>(shift_constant)), 0x00);
    sum_ = _mm_xor_si128(sum_, product);
  }

  // The reduced sum XOR the register of the last piece, which is not shifted.
  LANECAST_TARGET_CRC32_CLMUL uint32_t plus(uint32_t last) const {
    const auto product = static_cast<uint64_t>(_mm_cvtsi128_si64(sum_));
    return static_cast<uint32_t>(_mm_crc32_u64(0, product)) ^ last;
  }

 private:
  __m128i sum_ = _mm_setzero_si128();
};

}  // namespace lanecast::engine::crc32c_x86

#endif  // __x86_64__
