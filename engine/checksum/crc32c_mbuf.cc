// CRC-32C over bytes held in an mbuf chain, optionally copying them out: the
// receive side's checksum and its copy into the application's buffer, in one
// pass over each segment.
#include <rte_mbuf.h>

#include <algorithm>
#include <cstring>

#include "engine/checksum/crc32c.h"
#if defined(__x86_64__) && defined(__SSE4_2__)
#include "engine/checksum/crc32c_streams.h"
#include "engine/checksum/crc32c_x86.h"
#endif

namespace lanecast::engine {
namespace {

// The segment of the chain that holds byte `*offset`, and *offset made
// relative to it; null if the chain ends first.
const rte_mbuf* piece_at(const rte_mbuf* m, uint32_t* offset) {
  while (m != nullptr && *offset >= m->data_len) {
    *offset -= m->data_len;
    m = m->next;
  }
  return m;
}

// Calls visit(bytes, count) for each contiguous piece of [offset, offset + len)
// of the chain, in order. False if the chain ends first.
template <typename Visit>
bool for_each_piece(const rte_mbuf* m, uint32_t offset, uint32_t len, Visit visit) {
  m = piece_at(m, &offset);
  while (len > 0) {
    if (m == nullptr) return false;
    const uint32_t take = std::min<uint32_t>(len, m->data_len - offset);
    visit(rte_pktmbuf_mtod_offset(m, const uint8_t*, offset), take);
    len -= take;
    offset = 0;
    m = m->next;
  }
  return true;
}

// Any length, piece by piece on the best path. Out of line: the short path
// above then saves none of the registers this needs.
__attribute__((noinline)) bool crc32c_mbuf_copy_pieces(const rte_mbuf* m, uint32_t offset, uint32_t len, void* dst,
                                                       uint32_t* out) {
  uint32_t crc = 0;
  auto* to = static_cast<uint8_t*>(dst);
  const bool whole = for_each_piece(m, offset, len, [&](const uint8_t* p, uint32_t n) {
    crc = crc32c_copy(crc, to, p, n);
    to += n;
  });
  if (!whole) return false;
  *out = crc;
  return true;
}

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

// One piece on the best path, without the piece by piece walk. Out of line
// and called last, so the short path saves no registers for it.
__attribute__((noinline)) bool copy_one_piece(const uint8_t* src, uint32_t len, void* dst, uint32_t* out) {
  *out = crc32c_copy(0, dst, src, len);
  return true;
}

}  // namespace

bool crc32c_mbuf(const rte_mbuf* m, uint32_t offset, uint32_t len, uint32_t* out) {
  uint32_t crc = 0;
  const bool whole = for_each_piece(m, offset, len, [&](const uint8_t* p, uint32_t n) { crc = crc32c(crc, p, n); });
  if (!whole) return false;
  *out = crc;
  return true;
}

bool crc32c_mbuf_copy(const rte_mbuf* m, uint32_t offset, uint32_t len, void* dst, uint32_t* out) {
  uint32_t at = offset;
  const rte_mbuf* piece = piece_at(m, &at);
  if (piece != nullptr && len <= piece->data_len - at) {  // in one piece: every frame a port does not split
    const auto* src = rte_pktmbuf_mtod_offset(piece, const uint8_t*, at);
#if defined(__x86_64__) && defined(__SSE4_2__)
    // A short payload (64-byte segments, small stream batches): every path
    // sums it as one stream of crc32 instructions, so that stream runs
    // here, inline, without the path's dispatch (an indirect call and each
    // layer's checks) and without the registers the other paths save. The
    // build's x86 baseline (DPDK's -march) has SSE4.2.
    if (len < 8 * crc32c_x86::kMinStreamedQwords) {
      *out = ~short_copy(~0u, static_cast<uint8_t*>(dst), src, len);
      return true;
    }
#endif
    return copy_one_piece(src, len, dst, out);  // longer: straight to the path
  }
  return crc32c_mbuf_copy_pieces(m, offset, len, dst, out);
}

}  // namespace lanecast::engine
