#include "engine/runtime/port_locality.h"

#include <hwloc.h>
#include <hwloc/linux.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <system_error>

namespace lanecast::engine {
namespace {

bool is_pci_address(const std::string& s) {  // dddd:bb:dd.f, hex digits
  if (s.size() != 12 || s[4] != ':' || s[7] != ':' || s[10] != '.') return false;
  for (size_t i : {0u, 1u, 2u, 3u, 5u, 6u, 8u, 9u, 11u})
    if (!std::isxdigit(static_cast<unsigned char>(s[i]))) return false;
  return true;
}

// "0-3,6" from a sorted list.
std::string cpu_ranges(const std::vector<int>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(cpus[i]) + (j > i ? "-" + std::to_string(cpus[j]) : "");
    i = j + 1;
  }
  return out;
}

// The CPUs the kernel calls local to the PCI device (its NUMA node's), read
// by hwloc from sysfs. Not hwloc's I/O discovery: that loads plugins which
// keep memory for the process's life, and it finds the same set.
std::vector<int> cpus_near_pci(const std::string& pci) {
  std::vector<int> cpus;
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  if (set == nullptr) return cpus;
  const std::string path = "/sys/bus/pci/devices/" + pci + "/local_cpus";
  if (hwloc_linux_read_path_as_cpumask(path.c_str(), set) == 0) {
    unsigned pu;
    hwloc_bitmap_foreach_begin(pu, set) { cpus.push_back(static_cast<int>(pu)); }
    hwloc_bitmap_foreach_end();
  }
  hwloc_bitmap_free(set);
  return cpus;
}

}  // namespace

std::string iface_of_devargs(const std::string& devargs) {
  size_t at = 0;
  while (at < devargs.size()) {
    const size_t end = std::min(devargs.find(',', at), devargs.size());
    const std::string kv = devargs.substr(at, end - at);
    if (kv.rfind("iface=", 0) == 0) return kv.substr(6);
    at = end + 1;
  }
  return "";
}

std::string pci_in_sysfs_path(const std::string& path) {
  std::string found;
  for (const auto& part : std::filesystem::path(path))
    if (is_pci_address(part.string())) found = part.string();
  return found;
}

PortLocality locality_of(const std::string& devargs) {
  PortLocality l;
  const std::string name = devargs.substr(0, devargs.find(','));
  if (is_pci_address(name)) {
    l.port = "PCI " + name;
    l.pci = name;
  } else if (devargs.rfind("verbs:", 0) == 0) {  // verbs:DEVICE:PORT: the adapter's PCI function
    const std::string dev = devargs.substr(6, devargs.find(':', 6) - 6);
    l.port = "verbs " + dev;
    std::error_code ec;
    const auto path = std::filesystem::canonical("/sys/class/infiniband/" + dev, ec);
    if (!ec) l.pci = pci_in_sysfs_path(path.string());
  } else if (const std::string iface = iface_of_devargs(devargs); !iface.empty()) {
    l.port = "iface " + iface;
    std::error_code ec;
    const auto dev = std::filesystem::canonical("/sys/class/net/" + iface, ec);
    if (!ec) l.pci = pci_in_sysfs_path(dev.string());
  } else {
    l.port = name;
  }
  if (!l.pci.empty()) l.cpus = cpus_near_pci(l.pci);
  return l;
}

std::string PortLocality::describe() const {
  if (pci.empty()) return port + ", no PCI device: any CPU";
  const std::string at = port == "PCI " + pci ? port : port + ", PCI " + pci;
  return at + (cpus.empty() ? ", not in hwloc's topology: any CPU" : ", CPUs " + cpu_ranges(cpus));
}

namespace {

bool near(int cpu, const PortLocality& p) {
  return p.cpus.empty() || std::find(p.cpus.begin(), p.cpus.end(), cpu) != p.cpus.end();
}

}  // namespace

std::vector<size_t> lane_cores(const std::vector<int>& candidates, const std::vector<PortLocality>& ports) {
  std::vector<size_t> core(ports.size(), 0), uses(candidates.size(), 0);
  for (size_t l = 0; l < ports.size() && !candidates.empty(); ++l) {
    const bool any_near = std::any_of(candidates.begin(), candidates.end(), [&](int c) { return near(c, ports[l]); });
    size_t best = candidates.size();
    for (size_t i = 0; i < candidates.size(); ++i)
      if ((!any_near || near(candidates[i], ports[l])) && (best == candidates.size() || uses[i] < uses[best])) best = i;
    core[l] = best;
    ++uses[best];
  }
  return core;
}

}  // namespace lanecast::engine
