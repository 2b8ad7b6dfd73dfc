// The portable path: one table lookup per byte. The fallback on CPUs without
// SSE4.2 and on non-x86 builds, and the reference the tests hold the others to.
#include <array>

#include "engine/checksum/crc32c_kernels.h"
#include "engine/checksum/crc32c_math.h"

namespace lanecast::engine::crc32c_kernels {
namespace {

// Entry b is the register after feeding byte b into a zero register.
constexpr std::array<uint32_t, 256> kByteTable = [] {
  std::array<uint32_t, 256> t{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t c = b;
    for (int k = 0; k < 8; ++k) c = crc32c_math::times_x(c);
    t[b] = c;
  }
  return t;
}();

inline uint32_t step(uint32_t reg, uint8_t byte) { return kByteTable[(reg ^ byte) & 0xffu] ^ (reg >> 8); }

uint32_t table_update(uint32_t reg, const uint8_t* src, size_t len) {
  for (size_t i = 0; i < len; ++i) reg = step(reg, src[i]);
  return reg;
}

uint32_t table_copy(uint32_t reg, uint8_t* __restrict dst, const uint8_t* __restrict src, size_t len) {
  for (size_t i = 0; i < len; ++i) {
    const uint8_t byte = src[i];
    dst[i] = byte;
    reg = step(reg, byte);
  }
  return reg;
}

}  // namespace

const Kernel kTable{table_update, table_copy};

}  // namespace lanecast::engine::crc32c_kernels
