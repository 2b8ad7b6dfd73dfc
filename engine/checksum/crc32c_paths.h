// Test and benchmark hook: name the CRC-32C implementations and run a given
// one, so the tests hold every path the CPU has to the same results and the
// benchmark can compare them. The datapath calls crc32c() / crc32c_copy(),
// which use crc32c_best_path().
#pragma once

#include <cstddef>
#include <cstdint>

namespace lanecast::engine {

enum class Crc32cPath {
  Table,             // a table lookup per byte; any CPU
  Sse42,             // one stream of the crc32 instruction (SSE4.2)
  Sse42Interleaved,  // three crc32 streams joined with pclmulqdq
  Avx512,            // VPCLMULQDQ folding alongside six crc32 streams
};

inline constexpr Crc32cPath kAllCrc32cPaths[] = {Crc32cPath::Table, Crc32cPath::Sse42,
                                                 Crc32cPath::Sse42Interleaved, Crc32cPath::Avx512};

const char* crc32c_path_name(Crc32cPath path);

// Whether this build and this CPU can run `path`.
bool crc32c_available(Crc32cPath path);

// The path crc32c() and crc32c_copy() use: the last available one in the enum's
// order (each is faster than those before it where it is available).
Crc32cPath crc32c_best_path();

// crc32c() and crc32c_copy() on a given path. Throw std::invalid_argument if
// the path is not available.
uint32_t crc32c_with(Crc32cPath path, uint32_t crc, const void* data, size_t len);
uint32_t crc32c_copy_with(Crc32cPath path, uint32_t crc, void* dst, const void* src, size_t len);

}  // namespace lanecast::engine
