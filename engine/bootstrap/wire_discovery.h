// The discovery bootstrap: members find each other on the wire. Each sends a
// hello (engine/wire/wire.h) to the link's broadcast address on every lane every
// few milliseconds - its rank, this life of its process, a digest of its
// group file, whether it has heard every rank yet - and learns the others'
// addresses from theirs. It is done when every rank has said it heard every
// rank; it then keeps saying so for a few more rounds (for whoever missed
// it) and the group starts. It fails after the spec's bootstrap timeout,
// naming the ranks it never heard.
//
// Runs on the calling thread before the member's port is given to a polling
// core. Frames of the group other than hellos that arrive meanwhile (a
// member that was done first has begun the first operation) are kept, up to
// kEarlyFramesKept, for the member's node (take_early_frames()): dropping
// them cost that member a retransmission timeout - and, finding its rate, a
// lane cut to 70 Mbit/s out of slow start - at every group's start.
#pragma once

#include <rte_mempool.h>

#include <memory>

#include "drivers/port.h"
#include "engine/bootstrap/endpoints.h"

namespace lanecast::engine::bootstrap {

// A first operation's frames from every peer: a window (128) from each of a
// few, more than a chain or tree sends any member before it answers.
inline constexpr uint32_t kEarlyFramesKept = 512;

struct DiscoveryOptions {
  uint64_t interval_ns = 5'000'000;  // between a member's hellos
  uint32_t linger_rounds = 4;        // hellos sent after it is done
};

std::unique_ptr<Bootstrap> make_wire_discovery(const GroupSpec& spec, drivers::Port& port, rte_mempool* pool,
                                               const DiscoveryOptions& o = {});

}  // namespace lanecast::engine::bootstrap
