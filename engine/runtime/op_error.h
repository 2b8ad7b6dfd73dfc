// Why a broadcast or a member's streams failed: what a completion record and
// a stream's status carry to the application. Its own header so the parts
// that fail things (the node, the streams) share it without including each
// other.
#pragma once

#include <cstdint>

namespace lanecast::engine {

enum class OpError : uint8_t {
  None = 0,
  PeerSilent,    // a peer stopped acknowledging past the deadline
  NoProgress,    // nothing arrived for this operation past the deadline
  Mismatch,      // the root's frames disagree with what this member posted
  Internal,      // an algorithm asked for something impossible
  // A fail-stop group (NodeConfig::fail_stop) lost a member: this and every
  // later broadcast of this epoch fail at once. `peer` names the lost member
  // (kNoRank: nobody knew which), `reporter` the member that saw it go.
  GroupBroken,
};

}  // namespace lanecast::engine
