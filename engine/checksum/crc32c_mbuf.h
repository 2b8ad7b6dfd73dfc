// CRC-32C over a received frame's payload fused with its copy into the
// application's buffer (the receive side's one pass over the bytes), for an
// mbuf chain. Inline where the payload is in one piece (every frame a port
// does not split): the node's receive path takes every data frame through
// here, and the call, the saved registers and the general chain walk had
// cost more than the copy of a 64-byte payload. A split payload, and any
// longer than a short one, goes to the out-of-line paths (crc32c_mbuf.cc).
#pragma once

#include <rte_mbuf.h>

#include <cstdint>
#include <cstring>

#include "engine/checksum/crc32c.h"
#if defined(__x86_64__) && defined(__SSE4_2__)
#include "engine/checksum/crc32c_streams.h"
#include "engine/checksum/crc32c_x86.h"
#endif

namespace lanecast::engine {
namespace crc32c_mbuf_detail {

// One piece of `len` bytes on the best path (crc32c_copy); out of line.
bool copy_one_piece(const uint8_t* src, uint32_t len, void* dst, uint32_t* out);
// Any chain, piece by piece; out of line. False if the chain ends first.
bool copy_pieces(const rte_mbuf* m, uint32_t offset, uint32_t len, void* dst, uint32_t* out);

#if defined(__x86_64__) && defined(__SSE4_2__)
// A short payload's register after it, copied to dst: 16 bytes a step moved
// as one register and summed by two crc32 instructions reading the source -
// a qword loaded, summed and stored at a time took twice the instructions
// (a forwarded 64-byte frame: 1 217 -> 1 183, forward_instructions.sh) -
// and the last 15 bytes or fewer as single_stream does them.
LANECAST_TARGET_CRC32 inline uint32_t short_copy(uint32_t reg, uint8_t* dst, const uint8_t* src, uint32_t len) {
  uint64_t r = reg;
  uint32_t at = 0;
  for (; len - at >= 16; at += 16) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + at), _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + at)));
    uint64_t lo;
    uint64_t hi;
    std::memcpy(&lo, src + at, 8);
    std::memcpy(&hi, src + at + 8, 8);
    r = _mm_crc32_u64(_mm_crc32_u64(r, lo), hi);
  }
  const crc32c_x86::Reader<true> in{src, dst};
  return crc32c_x86::single_stream(static_cast<uint32_t>(r), in, at, len - at);
}
#endif

}  // namespace crc32c_mbuf_detail

// CRC over `len` bytes of an mbuf chain starting `offset` bytes into its
// data, copying those bytes to dst as it goes. On false (chain too short)
// *out is untouched and dst may hold a prefix of the bytes.
inline bool crc32c_mbuf_copy(const rte_mbuf* m, uint32_t offset, uint32_t len, void* dst, uint32_t* out) {
  // In one piece: the payload in the frame's first buffer (a NIC's), or all
  // of the next when the headers fill the first (a ring port's: a header
  // buffer chained to the sender's payload buffer).
  const rte_mbuf* piece = m;
  uint32_t at = offset;
  if (at >= m->data_len && m->next != nullptr) {
    at -= m->data_len;
    piece = m->next;
  }
  if (at > piece->data_len || len > piece->data_len - at)
    return crc32c_mbuf_detail::copy_pieces(m, offset, len, dst, out);
  const auto* src = rte_pktmbuf_mtod_offset(piece, const uint8_t*, at);
#if defined(__x86_64__) && defined(__SSE4_2__)
  // A short payload (64-byte segments, small stream batches): every path
  // sums it as one stream of crc32 instructions, so that stream runs here,
  // without the path's dispatch (an indirect call and each layer's checks).
  // The build's x86 baseline (DPDK's -march) has SSE4.2.
  if (len < 8 * crc32c_x86::kMinStreamedQwords) {
    *out = ~crc32c_mbuf_detail::short_copy(~0u, static_cast<uint8_t*>(dst), src, len);
    return true;
  }
#endif
  return crc32c_mbuf_detail::copy_one_piece(src, len, dst, out);  // longer: straight to the path
}

}  // namespace lanecast::engine
