// What a group's ports and fabric counted, and what its ports can do for it
// (LocalGroup and Group report them; lanecast/lanecast.h includes this).
#pragma once

#include <cstdint>
#include <string>

namespace lanecast {

struct FabricCounters {
  uint64_t switched = 0, lost = 0, queue_drops = 0, unknown_destination = 0;
  uint64_t replicated = 0;  // extra copies of multicast frames
  uint64_t not_joined = 0;  // multicast copies not made: the port had not joined the group
  uint64_t pool_drops = 0;  // copies not made: mempool empty
};

// What GroupOptions::faults (GroupSpec::faults) did to a member's frames one
// way, by kind.
struct FaultCounters {
  uint64_t lost = 0;               // lost at random
  uint64_t burst_lost = 0;         // lost in Gilbert-Elliott bursts
  uint64_t reordered = 0;          // held back, let out after later frames
  uint64_t duplicated = 0;         // a second copy made
  uint64_t corrupted_header = 0;   // a byte of lanecast's header flipped
  uint64_t corrupted_payload = 0;  // a byte past it flipped
  uint64_t delayed = 0;            // held for a delay (and jitter)
  uint64_t no_buffer = 0;          // a duplicate or corrupted copy not made: its pool was empty
};

// A member's port as it counts itself (the PMD's rte_eth_stats, or the ring
// port's own counters on the fabric).
struct PortCounters {
  uint64_t rx_frames = 0, tx_frames = 0;
  uint64_t tx_full = 0;      // frames the port did not take at once
  uint64_t rx_missed = 0;    // the device or kernel ring had no room
  uint64_t rx_errors = 0, tx_errors = 0;
  uint64_t rx_no_buffer = 0; // the rx mempool was empty
  uint64_t rx_lost_emulated = 0;  // multicast frames dropped on purpose (GroupOptions::mcast_loss)
  FaultCounters rx_faults, tx_faults;  // faults injected on purpose (GroupOptions::faults), per way
};

// What the group's ports can do, as the engine adapts to it.
struct GroupCaps {
  bool multicast = false;   // one frame per multicast (else emulated: one datagram per member)
  bool tx_chained = true;   // zero-copy forwarding (else frames are flattened: a counted copy)
  bool rx_wakeup = false;   // idle cores sleep until a frame arrives (else they nap)
  uint32_t segment_bytes = 0;  // the segment in use
  // Multicast asked for but emulated: why ("" when multicast is real or off).
  std::string multicast_fallback;
  std::string group_address;   // lane 0's, when multicast is real
  // Every frame sealed with the group's key (docs/security.md), and the
  // key's fingerprint ("" without a key).
  bool sealed = false;
  std::string key_fingerprint;
  uint32_t stream_fanout = 0;  // each member's children in a stream's tree (StreamOptions::fanout, resolved)
};

}  // namespace lanecast
