// A Port over a DPDK ethdev: any PMD (af_packet, af_xdp, ring, memif, pcap,
// real NICs), opened by devargs or wrapped by port id. Set-up lives in
// dpdk_port.cc; the datapath is the two inline burst calls below.
#pragma once

#include <rte_ethdev.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "drivers/dpdk/kernel_multicast.h"
#include "drivers/dpdk/packet_wakeup.h"
#include "drivers/group_filter.h"
#include "drivers/ethernet.h"
#include "drivers/port.h"

struct rte_mempool;

namespace lanecast::drivers {

struct DpdkPortOptions {
  uint16_t lanes = 1;             // rx/tx queue pairs
  uint16_t rx_descriptors = 1024;
  uint16_t tx_descriptors = 1024;
  uint32_t max_frame_bytes = 1514;  // link header included
  rte_mempool* rx_pool = nullptr;   // buffers the PMD receives into
  bool set_mac = false;             // replace the port's MAC with `mac`
  PeerAddress mac;
  // Kernel-interface PMDs (af_packet, af_xdp): open a wake-up socket on the
  // interface (packet_wakeup.h) so a sleeping core wakes on arrival.
  bool rx_wakeup = true;
  // The kernel interface's MTU, for kernel-interface PMDs (set by open()):
  // frames are checked against it instead of the ethdev's own limits, which
  // DPDK 22.11's af_packet reports as 1518 whatever its ring takes.
  uint32_t kernel_mtu = 0;
};

// Set-up throws std::invalid_argument for bad options and std::runtime_error
// (with DPDK's reason) when the device refuses; a port that fails to open
// leaves nothing behind (a probed device is removed again).
class DpdkPort final : public Port {
 public:
  // Probes `devargs` (e.g. "net_af_packet0,iface=veth0") and opens the port.
  static std::unique_ptr<DpdkPort> open(const std::string& devargs, const DpdkPortOptions& o);
  // The MTU of the kernel interface behind a kernel-interface PMD's devargs
  // ("net_af_packet0,iface=v0" -> v0's MTU), 0 for other PMDs or when unknown.
  static uint32_t interface_mtu(const std::string& devargs);
  // Bytes of data room (beyond the headroom) each receive buffer of the port
  // `devargs` opens must have: af_packet copies a whole ring frame (its
  // framesz devarg, 2048 by default, less 32) into one mbuf. 0: no such need.
  static uint32_t rx_buffer_bytes(const std::string& devargs);
  // The longest frame (link header included) the port `devargs` opens can
  // receive whole, 0 when only the MTU limits it: for af_packet its ring
  // frame less where the kernel writes into it (af_packet_ring.h), 2048 - 66
  // = 1982 by default; an interface of MTU 3000 without a larger framesz has
  // its frames truncated.
  static uint32_t rx_frame_limit(const std::string& devargs);
  // Receive buffers the port `devargs` opens keeps posted from its pool
  // before any frame arrived: af_packet none (frames wait in the kernel's
  // ring, an mbuf is taken per frame received); NIC-like PMDs a descriptor
  // ring's worth (af_xdp's fill ring is 2048).
  static uint32_t rx_buffers_held(const std::string& devargs);
  // Configures and starts an ethdev that already exists (e.g. from
  // rte_eth_from_rings). With detach_on_close the device is removed (vdev
  // freed) on destruction; otherwise the port is stopped and closed.
  DpdkPort(uint16_t port_id, const DpdkPortOptions& o, bool detach_on_close = false);
  // Stops the port, then closes it (or removes its device, see above).
  ~DpdkPort() override;
  DpdkPort(const DpdkPort&) = delete;
  DpdkPort& operator=(const DpdkPort&) = delete;

  uint16_t rx_burst(uint16_t lane, rte_mbuf** frames, uint16_t max) override {
    return rte_eth_rx_burst(port_id_, lane, frames, max);
  }
  uint16_t tx_burst(uint16_t lane, rte_mbuf** frames, uint16_t count) override {
    return rte_eth_tx_burst(port_id_, lane, frames, count);
  }

  uint16_t lanes() const override { return lanes_; }
  uint32_t max_frame_bytes() const override { return max_frame_; }
  PeerAddress address() const override { return mac_; }
  std::string name() const override { return name_; }
  PortCaps caps() const override { return caps_; }
  // Control path only (the PMD may take locks or make system calls).
  PortStats stats() const override;
  uint16_t link_header_bytes() const override;
  void write_link_header(uint8_t* at, const PeerAddress& dst) const override;
  bool accepts(const uint8_t* link_header) const override;
  bool is_from(const uint8_t* link_header, const PeerAddress& peer) const override;
  uint64_t accepted(const uint8_t* const* link_headers, uint16_t n) const override {
    return groups_.accepts_each(link_headers, n, mac_);
  }
  PeerAddress source_of(const uint8_t* link_header) const override { return ethernet::source_of(link_header); }
  // Multicast: a kernel-interface PMD joins on the interface's multicast list
  // (kernel_multicast.h); any other PMD programs the device's list
  // (rte_eth_dev_set_mc_addr_list), or, when the PMD has none, receives all
  // multicast (allmulticast, or promiscuous mode, already on). Frames of
  // groups not joined are refused by accepts() either way.
  PeerAddress group_address(const GroupAddressSeed& seed, uint16_t lane) const override {
    return ethernet::group_mac(seed, lane);
  }
  std::string join_group(uint16_t lane, const PeerAddress& group) override;
  void leave_group(uint16_t lane, const PeerAddress& group) override;
  void attach_waker(Waker* w) override;
  void detach_waker() override;
  void arm_wakeup() override;
  void disarm_wakeup() override;

  uint16_t port_id() const { return port_id_; }
  // Control path only.
  rte_eth_stats eth_stats() const;
  std::vector<std::pair<std::string, uint64_t>> xstats() const;  // name, value

 private:
  void setup(const DpdkPortOptions& o);
  void open_wakeup(const std::string& devargs);
  // Programs the device's multicast list to groups_ ("" or why not).
  std::string program_device_list();
  // af_packet: the kernel's filter on the PMD's sockets and the wake-up
  // socket, to this port's MAC, broadcast and groups_ (kernel_rx_filter.h).
  void refresh_rx_filter();

  uint16_t port_id_;
  uint16_t lanes_;
  uint32_t max_frame_;
  PeerAddress mac_;
  std::string name_;
  bool detach_;
  rte_device* device_ = nullptr;
  bool started_ = false;
  PortCaps caps_;
  std::unique_ptr<PacketWakeup> wakeup_;
  std::string iface_;                         // kernel-interface PMDs: the interface
  std::unique_ptr<KernelMulticast> kernel_mc_;  // opened at the first join
  std::vector<int> rx_sockets_;               // af_packet: the PMD's sockets (af_packet_fanout.h)
  GroupFilter groups_;
  bool allmulticast_set_ = false;             // we turned allmulticast on (off again on close)
  Waker* waker_ = nullptr;
};

}  // namespace lanecast::drivers
