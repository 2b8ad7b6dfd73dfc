// CRC-32C (Castagnoli), the checksum of lanecast frames. Uses the SSE4.2 crc32
// instruction when the CPU has it (checked once at start-up), a table otherwise.
#pragma once

#include <cstddef>
#include <cstdint>

struct rte_mbuf;

namespace lanecast::engine {

// Continue a CRC over `len` bytes; start with crc = 0.
uint32_t crc32c(uint32_t crc, const void* data, size_t len);

// CRC over `len` bytes of an mbuf chain starting `offset` bytes into its data.
// Returns false if the chain holds fewer bytes than asked.
bool crc32c_mbuf(const rte_mbuf* m, uint32_t offset, uint32_t len, uint32_t* out);

}  // namespace lanecast::engine
