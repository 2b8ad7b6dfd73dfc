// What a FaultPort (fault_port.h) does to frames: a profile of faults per
// link and way, chosen by rules. The engine builds these from a group's
// FaultOptions (lanecast/group_spec.h, engine/group/fault_setup.h); tests build them
// by hand.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "drivers/port.h"

struct rte_mempool;

namespace lanecast::drivers {

// The faults frames of one link suffer one way. Probabilities are per frame.
struct FaultProfile {
  double loss = 0;  // lost, each frame on its own: [0, 1)
  // Gilbert-Elliott: a two-state chain stepped once per frame of the link,
  // losing with burst_loss_good in the good state and burst_loss_bad in the
  // bad one (Gilbert's model: 0 and 1). Off while burst_enter is 0.
  double burst_enter = 0;      // good -> bad: [0, 1]
  double burst_leave = 0;      // bad -> good: (0, 1] when burst_enter > 0
  double burst_loss_good = 0;  // [0, 1)
  double burst_loss_bad = 1;   // [0, 1]
  // Held back, and let out once `reorder_gap` later frames of its link went
  // by (or FaultPortOptions::reorder_hold_ns passed): [0, 1).
  double reorder = 0;
  uint32_t reorder_gap = 3;  // 1..1000
  double duplicate = 0;      // a second copy, its own mbuf: [0, 1)
  // One byte past the link header XORed with a nonzero byte - a burst of at
  // most 8 bits, which a CRC-32 always detects: [0, 1).
  double corrupt = 0;
  // Every frame held this long plus a uniform draw of 0..jitter_ns; a
  // link's frames still leave in order. At most 1 s each.
  uint64_t delay_ns = 0;
  uint64_t jitter_ns = 0;

  bool any() const {
    return loss > 0 || burst_enter > 0 || reorder > 0 || duplicate > 0 || corrupt > 0 || delay_ns > 0 ||
           jitter_ns > 0;
  }
};

enum class FaultWay : uint8_t { Receive, Send };
enum class FaultFrames : uint8_t { All, Unicast, Multicast };  // by the destination's I/G bit

// Which frames a profile applies to. Of the rules that match a frame, the
// most specific wins: a named peer before any peer, then unicast or
// multicast before all frames.
struct FaultRule {
  FaultWay way = FaultWay::Receive;
  // The far end: the source of frames received, the destination of frames
  // sent (a group address for multicasts). None: any.
  std::optional<PeerAddress> peer;
  FaultFrames frames = FaultFrames::All;
  FaultProfile faults;
};

struct FaultPortOptions {
  std::vector<FaultRule> rules;
  // Addresses whose frames each draw from a random stream of their own (the
  // group's members): what happens to one link's frames then depends on
  // that link's frames alone, not on how they interleave with others'.
  // Frames of any other address share one stream per way and lane.
  std::vector<PeerAddress> links;
  uint64_t seed = 1;
  // Frames held (delayed, set aside, ready) per lane and way: a fault port
  // takes no more than it can hold, so nothing it takes is lost uncounted.
  uint32_t queue_frames = 4096;
  // The longest a frame set aside for reordering waits for later ones.
  uint64_t reorder_hold_ns = 200'000;
  // Bytes of the protocol's header after the link header: a byte flipped
  // there counts as corrupted_header, past it as corrupted_payload.
  uint16_t header_bytes = 0;
  rte_mempool* clone_pool = nullptr;  // duplicates: indirect mbufs (header-sized)
  // Corrupted copies of frames whose bytes are shared (a forwarded payload,
  // a multicast copy): room for a whole frame.
  rte_mempool* copy_pool = nullptr;
  uint64_t (*clock)() = nullptr;  // monotonic ns: delays, holds, held_until_ns()
};

}  // namespace lanecast::drivers
