// Collective steps made of broadcasts, for the benches whose members are
// processes (bench_group.cc, stream_group.cc): a barrier, and every
// member's figures to every member.
#pragma once

#include <cstddef>
#include <span>

#include "lanecast/lanecast.h"

namespace lanecast::apps {

// A barrier made of broadcasts: a member that holds member j's broadcast
// knows member j reached the barrier.
void barrier(Group& g);
// Every member's `bytes` bytes at all[r] sent to every member (member r roots
// the r-th broadcast), in pieces the group's message limit allows: a group
// made for 2-byte messages still exchanges its figures.
void all_to_all(Group& g, std::span<std::byte* const> all, size_t bytes, const char* what);

}  // namespace lanecast::apps
