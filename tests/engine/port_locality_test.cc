// Where a port sits: devargs and sysfs paths read right, the nearest polling
// CPU chosen right, and this machine's own interfaces looked up for real.
#include <gtest/gtest.h>

#include <vector>

#include <filesystem>
#include <string>
#include <system_error>

#include "engine/runtime/port_locality.h"

namespace lanecast::engine {
namespace {

TEST(PortLocality, ReadsTheInterfaceOfDevargs) {
  EXPECT_EQ(iface_of_devargs("net_af_packet0,iface=v0,qdisc_bypass=0"), "v0");
  EXPECT_EQ(iface_of_devargs("net_af_xdp1,start_queue=0,iface=eth3"), "eth3");
  EXPECT_EQ(iface_of_devargs("net_ring0"), "");
  EXPECT_EQ(iface_of_devargs("net_af_packet0,ifacex=v0"), "");
}

TEST(PortLocality, FindsThePciDeviceUnderAnInterface) {
  EXPECT_EQ(pci_in_sysfs_path("/sys/devices/pci0000:00/0000:00:03.0/virtio2/net/eth0"), "0000:00:03.0");
  // Behind a bridge of PCI ports: the device is the last address on the path.
  EXPECT_EQ(pci_in_sysfs_path("/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.1/net/ens1f1"), "0000:01:00.1");
  EXPECT_EQ(pci_in_sysfs_path("/sys/devices/virtual/net/v0"), "");
  EXPECT_EQ(pci_in_sysfs_path("/sys/devices/pci0000:00/0000:0g:03.0/net/x"), "");
}

TEST(PortLocality, GivesEachLaneTheLeastTakenCoreNearItsPort) {
  PortLocality a, b, any;
  a.cpus = {0, 1, 2, 3};
  b.cpus = {2, 3, 4, 5};
  using V = std::vector<size_t>;
  EXPECT_EQ(lane_cores({5, 1, 3}, {a, b}), (V{1, 0}));  // lane 0 on CPU 1, lane 1 on CPU 5
  EXPECT_EQ(lane_cores({1, 3}, {a, b}), (V{0, 1}));     // lane 1: CPU 3, the one near it
  EXPECT_EQ(lane_cores({1}, {a, b}), (V{0, 0}));        // one core: both lanes share it
  EXPECT_EQ(lane_cores({7, 8}, {a, b}), (V{0, 1}));     // none near: spread over all
  EXPECT_EQ(lane_cores({7, 8}, {any, any}), (V{0, 1})); // ports without a device: any core, one each
  EXPECT_EQ(lane_cores({7, 8, 9}, {any, any, any, any}), (V{0, 1, 2, 0}));
  EXPECT_EQ(lane_cores({3, 2}, {a}), (V{0}));           // one lane: the first near it
  EXPECT_EQ(lane_cores({7, 8}, {}), V{});
}

TEST(PortLocality, LooksUpThisMachinesInterfaces) {
  const PortLocality lo = locality_of("net_af_packet0,iface=lo");
  EXPECT_EQ(lo.port, "iface lo");
  EXPECT_TRUE(lo.pci.empty());
  EXPECT_EQ(lo.describe(), "iface lo, no PCI device: any CPU");
  EXPECT_EQ(locality_of("net_ring3").describe(), "net_ring3, no PCI device: any CPU");
  // Every interface on a PCI device: hwloc places it, near at least one CPU.
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/sys/class/net", ec)) {
    const std::string iface = entry.path().filename().string();
    const auto dev = std::filesystem::canonical(entry.path(), ec);
    if (ec || pci_in_sysfs_path(dev.string()).empty()) continue;
    const PortLocality l = locality_of("net_af_packet0,iface=" + iface);
    EXPECT_EQ(l.pci, pci_in_sysfs_path(dev.string())) << iface;
    EXPECT_FALSE(l.cpus.empty()) << iface << ": " << l.describe();
  }
}

}  // namespace
}  // namespace lanecast::engine
