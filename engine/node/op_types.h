// What crosses between an application thread and a polling core: a posted
// broadcast, and its outcome. Plain values: a submission crosses in an spsc
// queue, an outcome in the member's completion box (completion_box.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "algos/registry.h"
#include "algos/types.h"
#include "engine/runtime/op_error.h"

namespace lanecast::engine {

struct Submission {
  uint32_t op = 0;
  algos::Rank root = 0;
  algos::Algo algo = algos::Algo::Chain;
  std::byte* buffer = nullptr;  // root: the message; others: where it lands
  uint64_t size = 0;
  // When the application posted it (engine clock): the polling core's loop
  // time can be a little older, and a broadcast must not seem to start (or a
  // stashed frame to arrive) before it was posted.
  uint64_t posted_ns = 0;
};

struct CompletionRecord {
  uint32_t op = 0;
  OpError error = OpError::None;
  algos::Rank peer = algos::kNoRank;  // the silent or mismatching peer, if any
  algos::Rank reporter = algos::kNoRank;  // GroupBroken: who saw the peer go
  uint32_t broken_op = 0;                 // GroupBroken: during which broadcast
  // NoProgress: the member heard from least lately, when it has been silent
  // for a peer timeout or more (kNoRank: none heard was), and for how long.
  // A hint, not a verdict: a forwarder above a lost member is silent too.
  algos::Rank quiet_peer = algos::kNoRank;
  uint64_t quiet_ns = 0;
  uint64_t start_ns = 0;   // when the polling core started the operation
  uint64_t held_ns = 0;    // when this member held the whole message (the root: at start)
  uint64_t finish_ns = 0;  // when this member held everything and was acked
  uint32_t segments_held = 0;
  uint32_t segments_total = 0;
};

}  // namespace lanecast::engine
