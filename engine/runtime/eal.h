// DPDK environment start-up for lanecast: once per process, without hugepages
// or PCI devices unless asked, so the in-process fabric runs anywhere.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lanecast::engine {

struct EalOptions {
  uint32_t memory_mb = 512;      // -m: memory reserved for mempools and rings
  bool hugepages = false;        // false: --no-huge (anonymous memory)
  bool pci = false;              // false: --no-pci (virtual devices only)
  uint32_t polling_cores = 0;    // worker lcores; 0 = one per CPU of this process
  // No worker lcore at all: the application's threads poll (progress in
  // calls), and the main lcore may run on every CPU of the process.
  bool main_lcore_only = false;
  std::string file_prefix;       // empty: --no-shconf, no files in /var/run
  std::string log_level = "error";
  std::vector<std::string> vdevs;   // --vdev=... (e.g. net_af_packet0,iface=veth0)
  std::vector<std::string> extra;   // appended verbatim
};

// Starts EAL with the options above; throws std::runtime_error with DPDK's
// reason on failure. A second call with EAL already up is a no-op that returns
// false (EAL cannot be restarted within one process).
bool eal_start(const EalOptions& opts);
// The CPUs this process may run on (its affinity), in order; never empty.
std::vector<int> usable_cpus();
// Worker lcore ids, in order (the main lcore is the caller's thread).
std::vector<unsigned> eal_workers();
// The argument vector eal_start() would pass, for --help and logs.
std::vector<std::string> eal_arguments(const EalOptions& opts);

}  // namespace lanecast::engine
