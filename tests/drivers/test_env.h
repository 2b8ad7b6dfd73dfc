// Shared pieces of the driver tests: one EAL per test binary (started by a
// gtest Environment, --no-huge, no PCI), one mbuf pool, and frame helpers.
#pragma once

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <cstdint>
#include <cstring>

#include "drivers/ethernet.h"
#include "drivers/port.h"

namespace lanecast::drivers::test {

// The pool every test allocates from; 8191 mbufs of 2 KiB, no per-lcore cache
// (so rte_mempool_avail_count is exact for leak checks).
rte_mempool* pool();

// A single-mbuf lanecast frame of `bytes` (header included) from src to dst,
// carrying `id` right after the header and a byte pattern after that.
inline rte_mbuf* make_frame(const PeerAddress& dst, const PeerAddress& src, uint32_t id, uint16_t bytes = 64) {
  rte_mbuf* m = rte_pktmbuf_alloc(pool());
  if (m == nullptr) return nullptr;
  auto* p = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, bytes));
  if (p == nullptr) {
    rte_pktmbuf_free(m);
    return nullptr;
  }
  ethernet::write_header(p, dst, src);
  for (uint16_t i = ethernet::kHeaderBytes; i < bytes; ++i) p[i] = static_cast<uint8_t>(i);
  if (bytes >= ethernet::kHeaderBytes + 4) std::memcpy(p + ethernet::kHeaderBytes, &id, 4);
  return m;
}

inline uint32_t frame_id(const rte_mbuf* m) {
  uint32_t id;
  std::memcpy(&id, rte_pktmbuf_mtod_offset(m, const uint8_t*, ethernet::kHeaderBytes), 4);
  return id;
}

// A locally administered MAC ending in `last`: the decorator tests' members.
inline PeerAddress mac(uint8_t last) {
  const uint8_t m[6] = {2, 0, 0, 0, 0, last};
  return ethernet::to_peer(m);
}

// Virtual time for decorators that hold frames on a clock: tests set
// fake_now, the port reads fake_clock.
inline uint64_t fake_now = 0;
inline uint64_t fake_clock() { return fake_now; }

// Checks that every mbuf a test took went back to the pool.
class PoolGuard {
 public:
  PoolGuard() : start_(rte_mempool_avail_count(pool())) {}
  unsigned start() const { return start_; }
  unsigned now() const { return rte_mempool_avail_count(pool()); }

 private:
  unsigned start_;
};

}  // namespace lanecast::drivers::test
