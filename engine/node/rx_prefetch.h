// Fetching a received burst's bytes ahead of the frame being handled.
//
// Every member reads each payload once (its CRC checked while it is copied
// into the application's buffer), and in process that read, not the copy,
// is the cost: eight members on one core, chain of 16 MiB, ran at 955 MB/s
// with the receivers' payload read left out and at 660 MB/s with it, while
// leaving out only the copy, or only the CRC, changed nothing. The payload a
// member reads was last touched a hop earlier, by its predecessor, one or
// two turns of the core ago; the other members' bytes in between (each
// turn, about 160 KB read and written) push it out of L2. So the burst's
// frames are fetched ahead, by dependency: first the descriptor line that
// links a header to its payload (every frame of the burst at once), then the
// payload's descriptor two frames ahead, then the payload's bytes one frame
// ahead (docs/engine.md, "In process: what a turn costs"). And the member's
// buffer where the next segment will land, once this one is in.
#pragma once

#include <rte_mbuf.h>
#include <rte_prefetch.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "drivers/prefetch.h"

namespace lanecast::engine {

// At most this many bytes of a frame are fetched ahead: past them the
// hardware's stream prefetcher follows the sequential read on its own.
inline constexpr uint32_t kRxPrefetchBytes = 2048;

// Step 1, every frame of a burst: the line of its descriptor that holds
// `next` (the second; the first was read for the link header).
inline void prefetch_chain_link(const rte_mbuf* m) { rte_prefetch0(&m->next); }

// Step 2, two frames ahead: the payload's descriptor (a ring port's frame is
// a header buffer chained to the sender's payload buffer).
inline void prefetch_payload_descriptor(const rte_mbuf* m) {
  if (m->next != nullptr) rte_prefetch0(m->next);
}

// Step 3, one frame ahead: the bytes past the first line (the headers, fetched
// with the link header), in the frame's first buffer and then in the next.
inline void prefetch_frame_bytes(const rte_mbuf* m) {
  uint32_t budget = kRxPrefetchBytes;
  const auto* first = rte_pktmbuf_mtod(m, const uint8_t*);
  const uint32_t first_len = std::min<uint32_t>(m->data_len, budget);
  drivers::prefetch_lines(first + RTE_CACHE_LINE_SIZE, first + first_len);
  budget -= first_len;
  const rte_mbuf* next = m->next;
  if (next == nullptr || budget == 0) return;
  const auto* bytes = rte_pktmbuf_mtod(next, const uint8_t*);
  drivers::prefetch_lines(bytes, bytes + std::min<uint32_t>(next->data_len, budget));
}

// The application's buffer where the next segment lands, fetched while the
// next frame is on its way (a segment's bytes follow the one before): its
// lines are cold in process - the application read them last, on its own
// CPU - and a copy whose stores wait for their lines holds up what follows
// it. Segments of a chain arrive in order; where they do not (two trees
// alternate), the lines come in a little early. Read prefetches (the build's
// x86 baseline has no PREFETCHW): the bytes are here when the copy's stores
// come, at most the line's ownership is left to ask for. DPDK's, an asm
// statement: GCC 12 deleted a loop of __builtin_prefetch() here as one
// without effects. The root uses it too, for the next segment of the user's
// buffer it copies out (Broadcast::materialize): the application wrote it
// last, on its own CPU.
inline void prefetch_next_segment(const std::byte* from, const std::byte* buffer_end, uint32_t len) {
  if (from >= buffer_end) return;  // the last segment (or a frame fits_op() refuses)
  const auto room = static_cast<size_t>(buffer_end - from);
  drivers::prefetch_lines(from, from + std::min<size_t>(room, len));
}

}  // namespace lanecast::engine
