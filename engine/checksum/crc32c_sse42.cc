// One stream of the SSE4.2 crc32 instruction: the path for x86 CPUs that have
// crc32 but not pclmulqdq, and the baseline the faster paths are measured by.
#include "engine/checksum/crc32c_kernels.h"

#if defined(__x86_64__)

#include "engine/checksum/crc32c_x86.h"

namespace lanecast::engine::crc32c_kernels {
namespace {

using crc32c_x86::Reader;

LANECAST_TARGET_CRC32 uint32_t sse42_update(uint32_t reg, const uint8_t* src, size_t len) {
  return crc32c_x86::single_stream(reg, Reader<false>{src, nullptr}, 0, len);
}

LANECAST_TARGET_CRC32 uint32_t sse42_copy(uint32_t reg, uint8_t* dst, const uint8_t* src, size_t len) {
  return crc32c_x86::single_stream(reg, Reader<true>{src, dst}, 0, len);
}

}  // namespace

const Kernel kSse42{sse42_update, sse42_copy};

}  // namespace lanecast::engine::crc32c_kernels

#endif  // __x86_64__
