// The implementations behind crc32c() and crc32c_copy(), one pair per path.
// Internal to the engine. Each takes and returns the raw CRC register (the
// public functions invert it on entry and exit, as CRC-32C defines), handles
// every length on its own, and, when copying, writes exactly dst[0, len) and
// reads every source byte once. dst and src must not overlap.
#pragma once

#include <cstddef>
#include <cstdint>

namespace lanecast::engine::crc32c_kernels {

using UpdateFn = uint32_t (*)(uint32_t reg, const uint8_t* src, size_t len);
using CopyFn = uint32_t (*)(uint32_t reg, uint8_t* dst, const uint8_t* src, size_t len);

struct Kernel {
  UpdateFn update;
  CopyFn copy;
};

// Byte at a time through a 256-entry table: any CPU (crc32c_table.cc).
extern const Kernel kTable;

#if defined(__x86_64__)
// One stream of the SSE4.2 crc32 instruction (crc32c_sse42.cc).
extern const Kernel kSse42;
// Three crc32 streams joined with pclmulqdq (crc32c_interleaved.cc).
extern const Kernel kSse42Interleaved;
// VPCLMULQDQ folding alongside six crc32 streams (crc32c_avx512.cc).
extern const Kernel kAvx512;
#endif

}  // namespace lanecast::engine::crc32c_kernels
