// The replaying thread keeps time by spinning: on a CPU of its own it is
// never queued behind a polling core (which spins too). Moves the calling
// thread to the CPUs it may use that no polling core is pinned to; says
// what it did.
#pragma once

#include <pthread.h>
#include <sched.h>

#include <string>
#include <vector>

namespace lanecast::replay {

inline std::string keep_off(const std::vector<int>& busy) {
  cpu_set_t mine;
  CPU_ZERO(&mine);
  if (sched_getaffinity(0, sizeof mine, &mine) != 0) return "its CPUs unknown";
  cpu_set_t free = mine;
  for (int c : busy)
    if (c >= 0) CPU_CLR(c, &free);
  std::string list;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &free)) list += (list.empty() ? "" : ",") + std::to_string(c);
  if (list.empty()) return "sharing the polling cores' CPUs (no other CPU)";
  if (pthread_setaffinity_np(pthread_self(), sizeof free, &free) != 0) return "could not be moved";
  return "on CPU " + list + ", off the polling cores'";
}

}  // namespace lanecast::replay
