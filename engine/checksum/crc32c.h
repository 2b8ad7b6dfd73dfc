// CRC-32C (Castagnoli), the checksum of lanecast frames, and the same checksum
// fused with the copy of the bytes it covers, so a receiving member reads each
// payload byte once. The implementation is chosen once, at first use, from the
// CPU's features (see crc32c_paths.h); every implementation gives the same
// results.
#pragma once

#include <cstddef>
#include <cstdint>

struct rte_mbuf;

namespace lanecast::engine {

// Continue a CRC over `len` bytes; start with crc = 0.
uint32_t crc32c(uint32_t crc, const void* data, size_t len);

// Copies `len` bytes from src to dst (which must not overlap) and returns
// crc32c(crc, src, len). Reads each source byte once and writes exactly
// dst[0, len).
uint32_t crc32c_copy(uint32_t crc, void* dst, const void* src, size_t len);

// CRC over `len` bytes of an mbuf chain starting `offset` bytes into its data.
// Returns false if the chain holds fewer bytes than asked.
bool crc32c_mbuf(const rte_mbuf* m, uint32_t offset, uint32_t len, uint32_t* out);

// The same copying the bytes out as it goes: crc32c_mbuf_copy(), inline in
// crc32c_mbuf.h.

}  // namespace lanecast::engine
