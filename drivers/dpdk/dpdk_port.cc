// DpdkPort set-up: probe, configure, queues, start, and teardown. The datapath
// (rx_burst / tx_burst) is inline in dpdk_port.h.
#include "drivers/dpdk/dpdk_port.h"

#include <net/if.h>
#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_errno.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <stdexcept>

#include "drivers/dpdk/af_packet_fanout.h"
#include "drivers/dpdk/kernel_rx_filter.h"
#include "drivers/dpdk/af_packet_ring.h"
#include "drivers/ethernet.h"
#include "drivers/wake.h"

namespace lanecast::drivers {
namespace {

std::string err(const std::string& what, int rc) {
  return what + ": " + rte_strerror(rc < 0 ? -rc : rc);
}

// The value of `key=` in "name,key=value,...", or "".
std::string devarg(const std::string& devargs, const std::string& key) {
  size_t pos = 0;
  while ((pos = devargs.find(',', pos)) != std::string::npos) {
    ++pos;
    if (devargs.compare(pos, key.size() + 1, key + "=") == 0) {
      const size_t start = pos + key.size() + 1;
      return devargs.substr(start, devargs.find(',', start) - start);
    }
  }
  return "";
}

// "af_packet" or "af_xdp" for the PMDs that sit on a kernel interface.
const char* kernel_pmd(const std::string& devargs) {
  if (devargs.rfind("net_af_packet", 0) == 0) return "af_packet";
  if (devargs.rfind("net_af_xdp", 0) == 0) return "af_xdp";
  return nullptr;
}

// Kernel-interface PMDs fail to probe with a bare -EINVAL when the interface
// is missing; say which interface instead.
void check_interface(const std::string& devargs) {
  const char* kind = kernel_pmd(devargs);
  if (kind == nullptr) return;
  const std::string iface = devarg(devargs, "iface");
  if (iface.empty()) throw std::invalid_argument(std::string(kind) + ": '" + devargs + "' names no iface=");
  if (if_nametoindex(iface.c_str()) == 0)
    throw std::runtime_error(std::string(kind) + ": interface " + iface + " not found");
}

// DPDK 22.11 reports any refused af_packet probe as -EPERM (-1). Two
// refusals are the kernel's and easily mistaken: the PMD's packet socket
// needs CAP_NET_RAW, and it maps each lane's rings with MAP_LOCKED, which
// must fit RLIMIT_MEMLOCK (unless CAP_IPC_LOCK). Names the one that holds
// here, or "".
std::string af_packet_refusal(const std::string& devargs) {
  if (devargs.rfind("net_af_packet", 0) != 0) return "";
  const int s = ::socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
  if (s < 0)
    return errno == EPERM ? "; its packet socket needs CAP_NET_RAW (run as root or grant it; docs/daemon.md)" : "";
  ::close(s);
  auto number = [&](const char* key, uint64_t otherwise) {
    const std::string v = devarg(devargs, key);
    return v.empty() ? otherwise : std::strtoull(v.c_str(), nullptr, 10);
  };
  const uint64_t rings =
      2 * number("framesz", af_packet::kDefaultFrameBytes) * number("framecnt", af_packet::kDefaultFrameCount);
  rlimit lim{};
  if (::getrlimit(RLIMIT_MEMLOCK, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY || lim.rlim_cur >= rings) return "";
  return "; its rings (" + std::to_string(rings) + " bytes a lane) are mapped locked, and RLIMIT_MEMLOCK is " +
         std::to_string(lim.rlim_cur) + " bytes: raise it (ulimit -l, LimitMEMLOCK=) or grant CAP_IPC_LOCK (docs/daemon.md)";
}

}  // namespace

std::unique_ptr<DpdkPort> DpdkPort::open(const std::string& devargs, const DpdkPortOptions& o) {
  if (devargs.empty()) throw std::invalid_argument("dpdk port: empty devargs");
  check_interface(devargs);
  const std::string name = devargs.substr(0, devargs.find(','));
  uint16_t id;
  if (rte_eth_dev_get_port_by_name(name.c_str(), &id) == 0)
    throw std::runtime_error("dpdk port: " + name + " is already open");
  af_packet::new_port();  // its sockets get fanout groups of their own
  const int rc = rte_dev_probe(devargs.c_str());
  if (rc < 0)
    throw std::runtime_error(err("dpdk port: cannot probe '" + devargs + "'", rc) +
                             (rc == -EPERM ? af_packet_refusal(devargs) : ""));
  if (rte_eth_dev_get_port_by_name(name.c_str(), &id) != 0)
    throw std::runtime_error("dpdk port: '" + devargs + "' probed but no ethdev named " + name);
  try {
    DpdkPortOptions with_mtu = o;
    with_mtu.kernel_mtu = interface_mtu(devargs);
    auto port = std::make_unique<DpdkPort>(id, with_mtu, /*detach_on_close=*/true);
    if (kernel_pmd(devargs) != nullptr) port->iface_ = devarg(devargs, "iface");
    if (o.rx_wakeup) port->open_wakeup(devargs);
    if (devargs.rfind("net_af_packet", 0) == 0) port->rx_sockets_ = af_packet::port_sockets();
    port->refresh_rx_filter();
    return port;
  } catch (...) {
    rte_eth_dev_info info;
    if (rte_eth_dev_info_get(id, &info) == 0 && info.device != nullptr) rte_dev_remove(info.device);
    throw;
  }
}

uint32_t DpdkPort::interface_mtu(const std::string& devargs) {
  if (kernel_pmd(devargs) == nullptr) return 0;
  const std::string iface = devarg(devargs, "iface");
  if (iface.empty() || iface.find('/') != std::string::npos) return 0;
  std::ifstream in("/sys/class/net/" + iface + "/mtu");
  uint32_t mtu = 0;
  if (!(in >> mtu)) return 0;
  return mtu;
}

uint32_t DpdkPort::rx_buffer_bytes(const std::string& devargs) {
  if (devargs.rfind("net_af_packet", 0) != 0) return 0;
  const std::string framesz = devarg(devargs, "framesz");
  const unsigned long f =
      framesz.empty() ? af_packet::kDefaultFrameBytes : std::strtoul(framesz.c_str(), nullptr, 10);
  return f > 32 && f < (1u << 20) ? static_cast<uint32_t>(f - 32) : 0;
}

uint32_t DpdkPort::rx_frame_limit(const std::string& devargs) {
  const uint32_t room = rx_buffer_bytes(devargs);  // framesz - 32
  return room > af_packet::kFrameOffset - 32 ? room - (af_packet::kFrameOffset - 32) : 0;
}

uint32_t DpdkPort::rx_buffers_held(const std::string& devargs) {
  return devargs.rfind("net_af_packet", 0) == 0 ? 0 : 2048;
}

void DpdkPort::open_wakeup(const std::string& devargs) {
  if (kernel_pmd(devargs) == nullptr) return;
  wakeup_ = std::make_unique<PacketWakeup>(devarg(devargs, "iface"), ethernet::kEtherType);
  caps_.rx_wakeup = true;
}

DpdkPort::DpdkPort(uint16_t port_id, const DpdkPortOptions& o, bool detach_on_close)
    : port_id_(port_id), lanes_(o.lanes), max_frame_(o.max_frame_bytes), detach_(detach_on_close) {
  if (!rte_eth_dev_is_valid_port(port_id))
    throw std::invalid_argument("dpdk port: no port " + std::to_string(port_id));
  if (o.lanes == 0) throw std::invalid_argument("dpdk port: at least one lane");
  if (o.rx_pool == nullptr) throw std::invalid_argument("dpdk port: rx mempool missing");
  if (o.max_frame_bytes < ethernet::kMinFrameBytes)
    throw std::invalid_argument("dpdk port: max frame of " + std::to_string(o.max_frame_bytes) +
                                " bytes is below Ethernet's 60");
  if (o.set_mac && o.mac.len != RTE_ETHER_ADDR_LEN)
    throw std::invalid_argument("dpdk port: a MAC has 6 bytes, not " + std::to_string(o.mac.len));
  char nm[RTE_ETH_NAME_MAX_LEN];
  name_ = rte_eth_dev_get_name_by_port(port_id, nm) == 0 ? nm : "port" + std::to_string(port_id);
  try {
    setup(o);
  } catch (...) {
    if (started_) rte_eth_dev_stop(port_id_);  // the caller still owns the ethdev
    throw;
  }
}

void DpdkPort::setup(const DpdkPortOptions& o) {
  const uint16_t id = port_id_;
  rte_eth_dev_info info;
  int rc = rte_eth_dev_info_get(id, &info);
  if (rc != 0) throw std::runtime_error(err("dpdk port " + name_ + ": no device info", rc));
  device_ = info.device;
  if (info.max_rx_queues < o.lanes || info.max_tx_queues < o.lanes)
    throw std::invalid_argument("dpdk port " + name_ + ": " + std::to_string(o.lanes) +
                                " lanes requested, device has " + std::to_string(info.max_rx_queues) +
                                " rx / " + std::to_string(info.max_tx_queues) + " tx queues");
  rte_eth_conf conf{};
  // max_frame_bytes counts the link header but not the FCS; the MTU neither.
  const uint32_t mtu = o.max_frame_bytes - ethernet::kHeaderBytes;
  if (o.kernel_mtu != 0) {
    // The kernel interface's MTU is the limit (set with `ip link`); the PMD's
    // own ring geometry is checked by its rx queue set-up.
    if (mtu > o.kernel_mtu)
      throw std::invalid_argument("dpdk port " + name_ + ": frames of " + std::to_string(o.max_frame_bytes) +
                                  " bytes need an MTU of " + std::to_string(mtu) + "; the interface has " +
                                  std::to_string(o.kernel_mtu));
  } else if (info.max_rx_pktlen && o.max_frame_bytes > info.max_rx_pktlen) {
    throw std::invalid_argument("dpdk port " + name_ + ": frames of " + std::to_string(o.max_frame_bytes) +
                                " bytes exceed the device's " + std::to_string(info.max_rx_pktlen));
  } else if (mtu > RTE_ETHER_MTU) {
    if (mtu > info.max_mtu)
      throw std::invalid_argument("dpdk port " + name_ + ": MTU " + std::to_string(mtu) +
                                  " exceeds the device's " + std::to_string(info.max_mtu));
    conf.rxmode.mtu = mtu;
  }
  // A frame longer than one receive buffer needs scattered receive.
  const uint32_t room = rte_pktmbuf_data_room_size(o.rx_pool);
  if (room < RTE_PKTMBUF_HEADROOM + o.max_frame_bytes && (info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_SCATTER))
    conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_SCATTER;
  // Forwarded frames are a header mbuf chained to a payload mbuf: the port
  // must take chains, or the engine flattens them (caps().tx_chained).
  caps_.tx_chained = (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS) != 0;
  // An Ethernet switch (a Linux bridge) copies a multicast frame to every
  // port; whether this one can receive it is found at join_group().
  caps_.multicast = true;
  if (caps_.tx_chained) conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
  // Never fast-free: it assumes every mbuf has one reference and comes from
  // one pool, and a forwarded payload is shared by reference between frames.
  rc = rte_eth_dev_configure(id, o.lanes, o.lanes, &conf);
  if (rc != 0) throw std::runtime_error(err("dpdk port " + name_ + ": configure", rc));
  uint16_t nrx = o.rx_descriptors, ntx = o.tx_descriptors;
  rc = rte_eth_dev_adjust_nb_rx_tx_desc(id, &nrx, &ntx);
  if (rc != 0) throw std::runtime_error(err("dpdk port " + name_ + ": descriptor counts", rc));
  const int socket = rte_eth_dev_socket_id(id);
  const unsigned sock = socket < 0 ? SOCKET_ID_ANY : static_cast<unsigned>(socket);
  for (uint16_t q = 0; q < o.lanes; ++q) {
    rc = rte_eth_rx_queue_setup(id, q, nrx, sock, nullptr, o.rx_pool);
    if (rc != 0) throw std::runtime_error(err("dpdk port " + name_ + ": rx queue " + std::to_string(q), rc));
    // The queue's offloads spelled out: a PMD's default queue configuration
    // may carry fast-free, which shared payloads forbid.
    rte_eth_txconf txconf = info.default_txconf;
    txconf.offloads = conf.txmode.offloads;
    rc = rte_eth_tx_queue_setup(id, q, ntx, sock, &txconf);
    if (rc != 0) throw std::runtime_error(err("dpdk port " + name_ + ": tx queue " + std::to_string(q), rc));
    rte_eth_txq_info qi;
    if (rte_eth_tx_queue_info_get(id, q, &qi) == 0 && (qi.conf.offloads & RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE))
      throw std::runtime_error("dpdk port " + name_ + ": tx queue " + std::to_string(q) +
                               " has fast-free on, which shared payload buffers forbid");
  }
  bool software_mac = false;
  if (o.set_mac) {
    rte_ether_addr a;
    ethernet::to_ether(o.mac, &a);
    rc = rte_eth_dev_default_mac_addr_set(id, &a);
    // PMDs that cannot change their MAC: frames are addressed and filtered in
    // software (promiscuous + accepts()) instead.
    if (rc == -ENOTSUP) software_mac = true;
    else if (rc != 0) throw std::runtime_error(err("dpdk port " + name_ + ": set MAC", rc));
  }
  rc = rte_eth_dev_start(id);
  // af_packet's start sets the interface's flags again (promiscuous mode):
  // an ioctl that needs CAP_NET_ADMIN.
  if (rc == -EPERM && name_.rfind("net_af_packet", 0) == 0)
    throw std::runtime_error(err("dpdk port " + name_ + ": start", rc) +
                             "; setting its interface's flags needs CAP_NET_ADMIN (run as root or grant it; "
                             "docs/daemon.md)");
  if (rc != 0) throw std::runtime_error(err("dpdk port " + name_ + ": start", rc));
  started_ = true;
  // Not every PMD has a promiscuous mode (and a ring port needs none):
  // accepts() is the filter that counts.
  rte_eth_promiscuous_enable(id);
  if (software_mac) {
    mac_ = o.mac;
  } else {
    rte_ether_addr a;
    rc = rte_eth_macaddr_get(id, &a);
    if (rc != 0) throw std::runtime_error(err("dpdk port " + name_ + ": read MAC", rc));
    mac_ = ethernet::to_peer(a);
  }
}

DpdkPort::~DpdkPort() {
  detach_waker();
  wakeup_.reset();
  kernel_mc_.reset();  // the kernel drops the interface memberships with the socket
  if (iface_.empty() && !groups_.list().empty()) rte_eth_dev_set_mc_addr_list(port_id_, nullptr, 0);
  if (allmulticast_set_) rte_eth_allmulticast_disable(port_id_);
  rte_eth_dev_stop(port_id_);
  if (detach_ && device_ != nullptr) {
    rte_dev_remove(device_);  // closes the port and frees the vdev for a new probe
  } else {
    rte_eth_dev_close(port_id_);
  }
}

uint16_t DpdkPort::link_header_bytes() const { return ethernet::kHeaderBytes; }

void DpdkPort::write_link_header(uint8_t* at, const PeerAddress& dst) const {
  ethernet::write_header(at, dst, mac_);
}

bool DpdkPort::accepts(const uint8_t* hdr) const { return groups_.accepts(hdr, mac_); }

std::string DpdkPort::join_group(uint16_t lane, const PeerAddress& group) {
  if (lane >= lanes_ || group.len != RTE_ETHER_ADDR_LEN || !ethernet::is_group(group.bytes))
    return name_ + ": " + format_address(group) + " is not a group address of a lane it has";
  if (!groups_.add(group)) return "";  // joined already: the device has it
  std::string why;
  if (!iface_.empty()) {
    try {
      if (kernel_mc_ == nullptr) kernel_mc_ = std::make_unique<KernelMulticast>(iface_);
      why = kernel_mc_->join(group);
    } catch (const std::exception& e) {
      why = e.what();
    }
  } else {
    why = program_device_list();
  }
  if (!why.empty()) groups_.remove(group);
  else refresh_rx_filter();
  return why;
}

void DpdkPort::leave_group(uint16_t lane, const PeerAddress& group) {
  (void)lane;
  if (!groups_.remove(group)) return;  // others still joined it, or it never was
  refresh_rx_filter();
  if (kernel_mc_ != nullptr) {
    kernel_mc_->leave(group);
  } else if (iface_.empty()) {
    program_device_list();
  }
}

std::string DpdkPort::program_device_list() {
  const std::vector<PeerAddress> list = groups_.list();
  std::vector<rte_ether_addr> addrs(list.size());
  for (size_t i = 0; i < list.size(); ++i) ethernet::to_ether(list[i], &addrs[i]);
  const int rc = rte_eth_dev_set_mc_addr_list(port_id_, addrs.empty() ? nullptr : addrs.data(),
                                              static_cast<uint32_t>(addrs.size()));
  if (rc == 0) return "";
  if (rc != -ENOTSUP) return err(name_ + ": cannot program its multicast list", rc);
  // No list in this PMD: receive every multicast frame, and let accepts()
  // keep what was joined.
  if (allmulticast_set_ || rte_eth_allmulticast_get(port_id_) == 1 || rte_eth_promiscuous_get(port_id_) == 1)
    return "";
  const int am = rte_eth_allmulticast_enable(port_id_);
  if (am == 0) {
    allmulticast_set_ = true;
    return "";
  }
  return err(name_ + ": its PMD has neither a multicast list nor allmulticast", am);
}

bool DpdkPort::is_from(const uint8_t* hdr, const PeerAddress& peer) const { return ethernet::is_from(hdr, peer); }

void DpdkPort::refresh_rx_filter() {
  if (rx_sockets_.empty() && wakeup_ == nullptr) return;
  std::vector<PeerAddress> accept = groups_.list();
  accept.push_back(mac_);
  accept.push_back(ethernet::broadcast());
  // The whole frame for the PMD's rings; a byte for the wake-up socket,
  // which only needs to turn readable. A filter that does not attach leaves
  // the socket taking every frame, as before: the engine's checks still
  // refuse what is not this port's, at a cost in CPU, not in correctness.
  const auto rings = rx_filter_program(accept, ethernet::kEtherType, 0x40000);
  for (int fd : rx_sockets_) attach_rx_filter(fd, rings);
  if (wakeup_ != nullptr) attach_rx_filter(wakeup_->fd(), rx_filter_program(accept, ethernet::kEtherType, 1));
}

void DpdkPort::attach_waker(Waker* w) {
  detach_waker();
  if (wakeup_ == nullptr || w == nullptr) return;
  w->add_fd(wakeup_->fd());
  waker_ = w;
}

void DpdkPort::detach_waker() {
  if (waker_ != nullptr && wakeup_ != nullptr) waker_->remove_fd(wakeup_->fd());
  waker_ = nullptr;
}

void DpdkPort::arm_wakeup() {
  if (wakeup_ != nullptr && !wakeup_->arm()) caps_.rx_wakeup = false;  // nap on a timer instead
}

void DpdkPort::disarm_wakeup() {
  if (wakeup_ != nullptr) wakeup_->disarm();
}

rte_eth_stats DpdkPort::eth_stats() const {
  rte_eth_stats s{};
  rte_eth_stats_get(port_id_, &s);
  return s;
}

PortStats DpdkPort::stats() const {
  const rte_eth_stats e = eth_stats();
  PortStats s;
  s.rx_frames = e.ipackets;
  s.tx_frames = e.opackets;
  s.rx_missed = e.imissed;
  s.rx_errors = e.ierrors;
  s.tx_errors = e.oerrors;
  s.rx_no_buffer = e.rx_nombuf;
  return s;
}

std::vector<std::pair<std::string, uint64_t>> DpdkPort::xstats() const {
  std::vector<std::pair<std::string, uint64_t>> out;
  const int n = rte_eth_xstats_get(port_id_, nullptr, 0);
  if (n <= 0) return out;
  std::vector<rte_eth_xstat> values(static_cast<size_t>(n));
  std::vector<rte_eth_xstat_name> names(static_cast<size_t>(n));
  const int got = rte_eth_xstats_get(port_id_, values.data(), static_cast<unsigned>(n));
  const int named = rte_eth_xstats_get_names(port_id_, names.data(), static_cast<unsigned>(n));
  if (got != n || named != n) return out;
  out.reserve(static_cast<size_t>(n));
  for (const rte_eth_xstat& v : values)
    if (v.id < static_cast<uint64_t>(n)) out.emplace_back(names[v.id].name, v.value);
  return out;
}

}  // namespace lanecast::drivers
