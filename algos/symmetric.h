// symmetric: Juhasz's constant-time broadcast for fully switched clusters
// (S. Juhasz, "Broadcasting Algorithm of Constant Complexity for Fully-Switched
// Clusters", 2003/2004). The root cuts the message into one piece per receiver
// (algos/topology/pieces.h, whole segments) and sends piece i to receiver i, all
// at once (round-robin over the receivers, so that every one starts early);
// every receiver forwards each segment of its own piece to every other receiver
// as it arrives. Pieces may arrive in any order. The root sends M bytes in
// total; on a full-bisection switch the time is 2 t0 + n td (2 - 1/p) - about,
// since the pieces are whole segments.
//
// Small-message fallback (the paper's one-phase variant): below a size the root
// sends the whole message to everyone. By default that is a message of at most
// one segment, where the second phase only adds a hop.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "algos/arena.h"
#include "algos/machine.h"

namespace lanecast::algos {

struct SymmetricOptions {
  // One phase (root to all) when the message has fewer bytes than this, or when
  // it is a single segment.
  uint64_t one_phase_below_bytes = 0;
};

std::unique_ptr<Machine> make_symmetric(const Plan& plan, Rank me, const SymmetricOptions& opt);
std::unique_ptr<Machine> make_symmetric(const Plan& plan, Rank me);
MachinePtr make_symmetric(const Plan& plan, Rank me, const SymmetricOptions& opt, MachineArena& arena);
MachinePtr make_symmetric(const Plan& plan, Rank me, MachineArena& arena);
// The arena bytes make_symmetric needs at most (any options, root, rank, and
// message of at most max_segments segments in a group of `nodes`).
size_t symmetric_arena_bytes(uint32_t nodes, uint32_t max_segments);

}  // namespace lanecast::algos
