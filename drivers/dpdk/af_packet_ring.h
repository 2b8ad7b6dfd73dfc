// What the af_packet PMD's receive ring is made of, as far as the port and
// the testbed's group files (which size its ring frames for an MTU) both
// depend on it. No DPDK here: the testbed tools include it too.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <numeric>
#include <string>

namespace lanecast::drivers::af_packet {

// A ring frame's size when the devargs give no framesz (DPDK 22.11,
// rte_eth_af_packet.c).
inline constexpr uint32_t kDefaultFrameBytes = 2048;
// Ring frames when the devargs give no framecnt (DPDK 22.11). The PMD maps a
// lane's receive and transmit rings, framesz x framecnt each, in one mmap.
inline constexpr uint32_t kDefaultFrameCount = 512;
// Where the kernel writes a received frame into a ring frame (TPACKET_V2,
// Ethernet: tpacket_rcv's macoff = its header and a sockaddr_ll aligned to
// 16, plus 16, less the 14-byte link header). A frame longer than the ring
// frame less this is truncated.
inline constexpr uint32_t kFrameOffset = 66;

// The PMD's ring geometry for frames of `mtu` bytes, as devargs
// (",framesz=...,blocksz=...,framecnt=..."), or "" when its defaults hold
// them. The rules (DPDK 22.11 rte_eth_af_packet.c and the kernel's
// packet_set_ring): the kernel writes a frame at kFrameOffset of a ring
// frame, so framesz >= kFrameOffset + frame; framesz a multiple of 16,
// blocksz a multiple of the page size and of framesz, framecnt a multiple of
// the frames per block; as many ring frames as the PMD's default ring.
inline std::string ring_devargs(uint32_t mtu) {
  const uint64_t need = kFrameOffset + uint64_t{mtu} + 14;
  if (need <= kDefaultFrameBytes) return "";
  const uint64_t framesz = (need + 1023) / 1024 * 1024;
  const long page_size = ::sysconf(_SC_PAGESIZE);
  const uint64_t page = page_size > 0 ? static_cast<uint64_t>(page_size) : 4096;
  const uint64_t blocksz = std::lcm(framesz, page);
  const uint64_t per_block = blocksz / framesz;
  const uint64_t framecnt = (kDefaultFrameCount + per_block - 1) / per_block * per_block;
  return ",framesz=" + std::to_string(framesz) + ",blocksz=" + std::to_string(blocksz) +
         ",framecnt=" + std::to_string(framecnt);
}

}  // namespace lanecast::drivers::af_packet
