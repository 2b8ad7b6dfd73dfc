// How long the engine's polling cores waited, runnable, for their CPUs: the
// kernel's schedstat for each polling thread (/proc/self/task/TID/schedstat,
// its second field: time spent on a run queue). A polling core is never
// runnable-but-waiting on a machine that leaves it its CPU, so this is the
// time the machine - another thread, a kernel thread, the hypervisor's
// scheduling of the VM's CPUs is not counted here - took from the engine
// while it had work; a stream's tail that lines up with it is the machine's.
#pragma once

#include <cstdint>

namespace lanecast::apps {

// The total over this process's polling threads (DPDK's "rte-worker-N"), in
// ns; 0 where the kernel keeps no schedstat.
uint64_t polling_threads_wait_ns();

}  // namespace lanecast::apps
