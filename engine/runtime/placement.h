// Where the polling cores run: which CPUs, in which order.
//
// A polling core wants a physical core of its own: two pollers on the two
// hardware threads of one core share its execution units and caches, and a
// broadcast then runs at the speed of half a core. hwloc tells which of the
// CPUs this process may use belong to which core; pollers take the first
// hardware thread of each core in turn, and only when there are more pollers
// than cores a core's second thread. Which of them serves a joined member
// follows its ports' locality (port_locality.h).
#pragma once

#include <vector>

namespace lanecast::engine {

// The CPUs (OS indexes) the polling cores are pinned to, in order: one per
// physical core first, among the CPUs this process may run on. Never empty.
std::vector<int> polling_cpus();

}  // namespace lanecast::engine
