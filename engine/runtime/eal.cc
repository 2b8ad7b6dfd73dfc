#include "engine/runtime/eal.h"

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <sched.h>

#include <mutex>
#include <stdexcept>

#include "engine/runtime/placement.h"

namespace lanecast::engine {
namespace {

std::once_flag g_once;

}  // namespace

std::vector<int> usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
  if (cpus.empty()) cpus.push_back(0);
  return cpus;
}

namespace {

// A CPU set as --lcores writes it: "(0,2,3)".
std::string cpu_set(const std::vector<int>& cpus) {
  std::string set = "(";
  for (size_t i = 0; i < cpus.size(); ++i) set += (i ? "," : "") + std::to_string(cpus[i]);
  return set + ")";
}

// --lcores: workers pinned one per CPU, the main lcore over the CPUs left.
std::string lcores_with_workers(const EalOptions& o, const std::vector<int>& cpus) {
  const std::vector<int> pinned = polling_cpus();  // one per physical core first (hwloc)
  const unsigned workers = o.polling_cores ? o.polling_cores : static_cast<unsigned>(cpus.size());
  // Each polling lcore is pinned to one CPU, round robin over
  // polling_cpus(): the scheduler may stack floating pollers on one CPU,
  // and a small broadcast then waits for the scheduler's time slice
  // instead of a turn of the loop. The main lcore (the
  // application's thread, and the threads it starts) floats over the CPUs no
  // poller takes, so it does not preempt a polling core; over all of them
  // when the pollers take every CPU.
  std::vector<int> rest;
  for (int c : cpus) {
    bool polled = false;
    for (unsigned i = 0; i < workers && i < pinned.size(); ++i) polled = polled || pinned[i] == c;
    if (!polled) rest.push_back(c);
  }
  if (rest.empty()) rest = cpus;
  std::string lcores = "--lcores=0@" + cpu_set(rest);
  for (unsigned i = 1; i <= workers; ++i)
    lcores += "," + std::to_string(i) + "@" + std::to_string(pinned[(i - 1) % pinned.size()]);
  return lcores;
}

}  // namespace

std::vector<std::string> eal_arguments(const EalOptions& o) {
  std::vector<std::string> a{"lanecast"};
  const std::vector<int> cpus = usable_cpus();
  // Without workers the caller's thread is the poller: EAL must not pin it to
  // the CPUs a worker would leave over. Pinned there, 16 member processes on
  // 2 CPUs all ran on one of them while the other stayed idle.
  a.push_back(o.main_lcore_only ? "--lcores=0@" + cpu_set(cpus) : lcores_with_workers(o, cpus));
  a.push_back("-m");
  a.push_back(std::to_string(o.memory_mb));
  if (!o.hugepages) a.push_back("--no-huge");
  if (!o.pci) a.push_back("--no-pci");
  if (o.file_prefix.empty()) {
    a.push_back("--no-shconf");
  } else {
    a.push_back("--file-prefix=" + o.file_prefix);
  }
  a.push_back("--no-telemetry");
  a.push_back("--log-level=" + (o.log_level.empty() ? std::string("error") : o.log_level));
  for (const auto& v : o.vdevs) a.push_back("--vdev=" + v);
  for (const auto& e : o.extra) a.push_back(e);
  return a;
}

bool eal_start(const EalOptions& opts) {
  bool started = false;
  std::string error;
  std::call_once(g_once, [&] {
    auto args = eal_arguments(opts);
    std::vector<char*> argv;
    for (auto& s : args) argv.push_back(s.data());
    argv.push_back(nullptr);
    const int rc = rte_eal_init(static_cast<int>(args.size()), argv.data());
    if (rc < 0) {
      error = std::string("DPDK EAL failed to start: ") + rte_strerror(rte_errno);
      return;
    }
    started = true;
  });
  if (!error.empty()) throw std::runtime_error(error);
  return started;
}

std::vector<unsigned> eal_workers() {
  std::vector<unsigned> ids;
  unsigned id;
  RTE_LCORE_FOREACH_WORKER(id) { ids.push_back(id); }
  return ids;
}

}  // namespace lanecast::engine
