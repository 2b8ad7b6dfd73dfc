#include "engine/runtime/placement.h"

#include <hwloc.h>
#include <sched.h>

#include <algorithm>
#include <cstdlib>

#include "engine/runtime/eal.h"

namespace lanecast::engine {
namespace {

// hwloc loads every plugin it finds when the first topology is made (PCI,
// OpenCL, GL, libxml2, CUDA...), and they bring X11, OpenCL and libxml2
// into the process: 9 of the 14 ms a member spent on its topology, though it
// only needs cores and hardware threads. Unless the user chose a list of
// their own, the plugins for devices are not loaded.
void skip_device_plugins() {
  setenv("HWLOC_PLUGINS_BLACKLIST",
         "hwloc_pci,hwloc_opencl,hwloc_gl,hwloc_xml_libxml,hwloc_cuda,hwloc_nvml,hwloc_rsmi,hwloc_levelzero",
         /*overwrite=*/0);
}

}  // namespace

std::vector<int> polling_cpus() {
  const std::vector<int> allowed = usable_cpus();
  skip_device_plugins();
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) return allowed;
  if (hwloc_topology_load(topo) != 0) {
    hwloc_topology_destroy(topo);
    return allowed;
  }
  // Rounds over the cores: the first allowed thread of each core, then the
  // second, and so on.
  std::vector<std::vector<int>> per_core;
  const int cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  for (int i = 0; i < cores; ++i) {
    hwloc_obj_t core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, static_cast<unsigned>(i));
    std::vector<int> threads;
    unsigned pu;
    hwloc_bitmap_foreach_begin(pu, core->cpuset) {
      if (std::find(allowed.begin(), allowed.end(), static_cast<int>(pu)) != allowed.end())
        threads.push_back(static_cast<int>(pu));
    }
    hwloc_bitmap_foreach_end();
    if (!threads.empty()) per_core.push_back(std::move(threads));
  }
  hwloc_topology_destroy(topo);
  std::vector<int> order;
  for (size_t round = 0; order.size() < allowed.size(); ++round) {
    bool any = false;
    for (const auto& t : per_core)
      if (round < t.size()) {
        order.push_back(t[round]);
        any = true;
      }
    if (!any) break;
  }
  // CPUs hwloc did not place in a core (should not happen) go last.
  for (int c : allowed)
    if (std::find(order.begin(), order.end(), c) == order.end()) order.push_back(c);
  return order;
}

}  // namespace lanecast::engine
