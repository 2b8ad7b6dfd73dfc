// The receive filter of a kernel-interface port's packet sockets: the
// destination MACs it takes, checked by the kernel before it copies a frame.
//
// An af_packet port runs its interface in promiscuous mode, so every frame
// the interface sees - another job's multicast that a switch without
// snooping floods to every port, its unicast to a MAC it does not know,
// other protocols' traffic - is copied into the port's rings, copied again
// by the PMD into an mbuf, and refused by the engine (accepts()). On a host
// whose CPUs are shared, that work is taken from the frames that matter. A
// classic BPF program on each of the PMD's sockets (SO_ATTACH_FILTER) keeps
// the frames a NIC's own filter would keep: lanecast's EtherType, to the
// port's MAC, the broadcast address (hellos), or a group it joined - and the
// kernel drops the rest before any copy. The engine's checks stay as they
// are; what the kernel drops is never counted by them.
#pragma once

#include <linux/filter.h>

#include <cstdint>
#include <string>
#include <vector>

#include "drivers/port.h"

namespace lanecast::drivers {

// The program: keep `keep_bytes` of a frame of `ethertype` whose destination
// is one of `accept` (6-byte addresses), drop anything else. At most 48
// addresses (a classic BPF jump reaches 255 instructions ahead; a port joins
// at most 32 groups, drivers/group_filter.h); throws std::length_error
// beyond.
std::vector<sock_filter> rx_filter_program(const std::vector<PeerAddress>& accept, uint16_t ethertype,
                                           uint32_t keep_bytes);

// Attaches `program` to socket `fd` (replacing the one it had, atomically:
// no frame sees neither). "" or why not.
std::string attach_rx_filter(int fd, const std::vector<sock_filter>& program);

}  // namespace lanecast::drivers
