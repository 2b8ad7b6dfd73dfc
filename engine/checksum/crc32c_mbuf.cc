// CRC-32C over bytes held in an mbuf chain, optionally copying them out: the
// receive side's checksum and its copy into the application's buffer, in one
// pass over each segment.
#include <rte_mbuf.h>

#include <algorithm>
#include <cstring>

#include "engine/checksum/crc32c_mbuf.h"

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

}  // namespace

namespace crc32c_mbuf_detail {

// Any length, piece by piece on the best path. Out of line: the inline short
// path then saves none of the registers this needs.
bool copy_pieces(const rte_mbuf* m, uint32_t offset, uint32_t len, void* dst, uint32_t* out) {
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

// One piece on the best path, without the piece by piece walk.
bool copy_one_piece(const uint8_t* src, uint32_t len, void* dst, uint32_t* out) {
  *out = crc32c_copy(0, dst, src, len);
  return true;
}

}  // namespace crc32c_mbuf_detail

bool crc32c_mbuf(const rte_mbuf* m, uint32_t offset, uint32_t len, uint32_t* out) {
  uint32_t crc = 0;
  const bool whole = for_each_piece(m, offset, len, [&](const uint8_t* p, uint32_t n) { crc = crc32c(crc, p, n); });
  if (!whole) return false;
  *out = crc;
  return true;
}

}  // namespace lanecast::engine
