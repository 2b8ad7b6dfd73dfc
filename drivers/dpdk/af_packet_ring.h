// What the af_packet PMD's receive ring is made of, as far as the port and
// the testbed's group files (which size its ring frames for an MTU) both
// depend on it. No DPDK here: the testbed tools include it too.
#pragma once

#include <cstdint>

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

}  // namespace lanecast::drivers::af_packet
