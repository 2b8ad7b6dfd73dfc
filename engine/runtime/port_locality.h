// Where a port sits in the machine: the CPUs nearest its device (the
// kernel's local_cpus of its PCI device, read through hwloc), so a member's
// polling core can run next to its NIC (a frame then crosses no socket
// interconnect on its way to the core).
//
// A port is named by its DPDK devargs. Kernel-backed ports (af_packet,
// af_xdp) name an interface: its sysfs device path leads to the PCI device
// under it, if any (a virtio or physical NIC); a PCI devargs names the device
// itself. A veth, a bridge or a ring port has no device: any CPU is as near.
#pragma once

#include <string>
#include <vector>

namespace lanecast::engine {

struct PortLocality {
  std::string port;       // what the devargs name: "iface v0", "PCI 0000:03:00.0", "net_ring0"
  std::string pci;        // the PCI device under it, or empty
  std::vector<int> cpus;  // the CPUs local to its device (its NUMA node's); empty: any CPU
  std::string describe() const;  // "iface eth0, PCI 0000:00:03.0, CPUs 0-1" / "iface v0, no PCI device: any CPU"
};

// The interface a devargs string names ("net_af_packet0,iface=v0,..." -> "v0"),
// or empty.
std::string iface_of_devargs(const std::string& devargs);
// The PCI address (dddd:bb:dd.f) in a sysfs device path, the last one on it,
// or empty: "/sys/devices/pci0000:00/0000:00:03.0/virtio2/net/eth0" -> "0000:00:03.0".
std::string pci_in_sysfs_path(const std::string& path);

// Looks the port up (sysfs, hwloc). Never throws: what cannot be found is
// "any CPU".
PortLocality locality_of(const std::string& devargs);

// The polling core of each lane of a member, as indexes in `candidates`
// (lane 0's also runs the member): each lane in turn takes, of the
// candidates near its port (any, when the port does not say; all, when none
// is near), the one the fewest lanes took before it, the first of those. Two
// lanes and two cores: a core each; one core: both on it.
std::vector<size_t> lane_cores(const std::vector<int>& candidates, const std::vector<PortLocality>& ports);

}  // namespace lanecast::engine
