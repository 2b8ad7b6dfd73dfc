// The discovery bootstrap: members find each other on the wire. Each sends a
// hello (engine/wire/wire.h) to the link's broadcast address on every lane every
// few milliseconds - its rank, this life of its process, a digest of its
// group file, and once it has heard every rank, which lives it heard (the
// formation) - and learns the others' addresses from theirs. It is done
// when every rank has said it heard the same formation as this member; it
// then keeps saying so for a few more rounds (for whoever missed it) and
// the group starts, every member with the same lives and so the same epoch.
// It fails after the spec's bootstrap timeout, naming the ranks it never
// heard - under any flood: each turn reads a bounded number of frames.
//
// Hellos sent again (hello_gate.h) never end a member's bootstrap nor form
// a group of lives that are gone: a hello that would end it (another
// process with this member's rank, a rank with other settings or at two
// addresses) does so only if sent since this member started, by the
// sender's clock; an earlier one is counted and named if the time-out comes.
//
// Runs on the calling thread before the member's port is given to a polling
// core. Frames of the group other than hellos that arrive meanwhile are
// kept for the member's node (early_frames.h).
#pragma once

#include <rte_mempool.h>

#include <memory>

#include "drivers/port.h"
#include "engine/bootstrap/early_frames.h"
#include "engine/bootstrap/endpoints.h"

namespace lanecast::engine::bootstrap {

struct DiscoveryOptions {
  uint64_t interval_ns = 5'000'000;  // between a member's hellos
  uint32_t linger_rounds = 4;        // hellos sent after it is done
  // Frames read per lane in one turn: then the clock is read again (the
  // deadline, the next hello) whether or not the port ran dry.
  uint32_t frames_per_turn = 256;
};

std::unique_ptr<Bootstrap> make_wire_discovery(const GroupSpec& spec, drivers::Port& port, rte_mempool* pool,
                                               const DiscoveryOptions& o = {});

}  // namespace lanecast::engine::bootstrap
