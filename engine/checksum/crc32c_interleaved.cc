// Three crc32 streams joined with pclmulqdq: the path for x86 CPUs without
// AVX-512 VPCLMULQDQ. Three streams are what a core that starts one crc32 per
// cycle (latency 3) can overlap; see crc32c_streams.h for the method.
#include "engine/checksum/crc32c_kernels.h"

#if defined(__x86_64__)

#include "engine/checksum/crc32c_streams.h"

namespace lanecast::engine::crc32c_kernels {
namespace {

using crc32c_x86::Reader;

constexpr size_t kStreams = 3;
// 3 x 512 bytes per chunk: long enough that a join (about 15 cycles, overlapped
// with the next chunk) is noise, short enough for the shift table.
constexpr size_t kChunkStrideQwords = 64;

LANECAST_TARGET_CRC32_CLMUL uint32_t interleaved_update(uint32_t reg, const uint8_t* src, size_t len) {
  return crc32c_x86::interleaved<kStreams, kChunkStrideQwords>(reg, Reader<false>{src, nullptr}, len);
}

LANECAST_TARGET_CRC32_CLMUL uint32_t interleaved_copy(uint32_t reg, uint8_t* dst, const uint8_t* src, size_t len) {
  return crc32c_x86::interleaved<kStreams, kChunkStrideQwords>(reg, Reader<true>{src, dst}, len);
}

}  // namespace

const Kernel kSse42Interleaved{interleaved_update, interleaved_copy};

}  // namespace lanecast::engine::crc32c_kernels

#endif  // __x86_64__
