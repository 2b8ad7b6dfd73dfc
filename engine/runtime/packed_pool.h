// Buffer pools for an engine whose DPDK memory is ordinary 4 KiB pages and
// whose ports are all virtual devices (--no-huge --no-pci, the engine's
// default): no device ever DMAs into these buffers, so they need no IO
// address and may cross page boundaries.
//
// DPDK's default pool in that mode pads every buffer to a 4 KiB page of its
// own, so that each would be IO-contiguous (a 2.4 KB buffer takes 4 KiB:
// 1.7x the memory), asks the IO address of each page, and takes one page
// fault per buffer as it writes their headers. Packed buffers in one
// memzone, faulted in by one madvise, make a member's start-up about ten
// times faster (tests/bench/bootstrap_time.sh measures it).
#pragma once

#include <rte_mempool.h>

#include <cstdint>
#include <string>

namespace lanecast::engine {

// Whether this process's DPDK memory and devices allow packed pools.
bool packed_pools_apply();

// A pktmbuf pool of `count` buffers with `data_room` bytes each, packed;
// nullptr (rte_errno set) when DPDK refuses.
rte_mempool* make_packed_pktmbuf_pool(const std::string& name, uint32_t count, uint32_t cache, uint16_t data_room);

}  // namespace lanecast::engine
