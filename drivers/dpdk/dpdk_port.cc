// DpdkPort set-up: probe, configure, queues, start, and teardown.
#include "drivers/dpdk/dpdk_port.h"

#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_errno.h>

#include <cstring>
#include <memory>
#include <stdexcept>

#include "drivers/ethernet.h"

namespace lanecast::drivers {
namespace {

std::string err(const std::string& what, int rc) {
  return what + ": " + rte_strerror(rc < 0 ? -rc : rc);
}

}  // namespace

std::unique_ptr<DpdkPort> DpdkPort::open(const std::string& devargs, const DpdkPortOptions& o) {
  if (devargs.empty()) throw std::invalid_argument("dpdk port: empty devargs");
  const int rc = rte_dev_probe(devargs.c_str());
  if (rc < 0) throw std::runtime_error(err("dpdk port: cannot probe '" + devargs + "'", rc));
  const std::string name = devargs.substr(0, devargs.find(','));
  uint16_t id;
  if (rte_eth_dev_get_port_by_name(name.c_str(), &id) != 0)
    throw std::runtime_error("dpdk port: '" + devargs + "' probed but no ethdev named " + name);
  return std::make_unique<DpdkPort>(id, o, /*detach_on_close=*/true);
}

DpdkPort::DpdkPort(uint16_t port_id, const DpdkPortOptions& o, bool detach_on_close)
    : port_id_(port_id), lanes_(o.lanes), max_frame_(o.max_frame_bytes), detach_(detach_on_close) {
  if (!rte_eth_dev_is_valid_port(port_id)) throw std::invalid_argument("dpdk port: no port " + std::to_string(port_id));
  if (o.lanes == 0) throw std::invalid_argument("dpdk port: at least one lane");
  if (o.rx_pool == nullptr) throw std::invalid_argument("dpdk port: rx mempool missing");
  char nm[RTE_ETH_NAME_MAX_LEN];
  name_ = rte_eth_dev_get_name_by_port(port_id, nm) == 0 ? nm : "port" + std::to_string(port_id);

  rte_eth_dev_info info;
  int rc = rte_eth_dev_info_get(port_id, &info);
  if (rc != 0) throw std::runtime_error(err("dpdk port " + name_ + ": no device info", rc));
  device_ = info.device;
  if (info.max_rx_queues < o.lanes || info.max_tx_queues < o.lanes)
    throw std::invalid_argument("dpdk port " + name_ + ": " + std::to_string(o.lanes) +
                                " lanes requested, device has " + std::to_string(info.max_rx_queues) +
                                " rx / " + std::to_string(info.max_tx_queues) + " tx queues");
  if (info.max_rx_pktlen && o.max_frame_bytes > info.max_rx_pktlen)
    throw std::invalid_argument("dpdk port " + name_ + ": frames of " + std::to_string(o.max_frame_bytes) +
                                " bytes exceed the device's " + std::to_string(info.max_rx_pktlen));

  rte_eth_conf conf{};
  if (o.max_frame_bytes > RTE_ETHER_MAX_LEN) conf.rxmode.mtu = o.max_frame_bytes - ethernet::kHeaderBytes;
  // Forwarded frames are a header mbuf chained to a payload mbuf.
  if (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS) conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
  rc = rte_eth_dev_configure(port_id, o.lanes, o.lanes, &conf);
  if (rc != 0) throw std::runtime_error(err("dpdk port " + name_ + ": configure", rc));
  uint16_t nrx = o.rx_descriptors, ntx = o.tx_descriptors;
  rte_eth_dev_adjust_nb_rx_tx_desc(port_id, &nrx, &ntx);
  const int socket = rte_eth_dev_socket_id(port_id);
  for (uint16_t q = 0; q < o.lanes; ++q) {
    rc = rte_eth_rx_queue_setup(port_id, q, nrx, socket < 0 ? SOCKET_ID_ANY : socket, nullptr, o.rx_pool);
    if (rc != 0) throw std::runtime_error(err("dpdk port " + name_ + ": rx queue " + std::to_string(q), rc));
    rc = rte_eth_tx_queue_setup(port_id, q, ntx, socket < 0 ? SOCKET_ID_ANY : socket, nullptr);
    if (rc != 0) throw std::runtime_error(err("dpdk port " + name_ + ": tx queue " + std::to_string(q), rc));
  }
  bool software_mac = false;
  if (o.set_mac) {
    if (o.mac.len != 6) throw std::invalid_argument("dpdk port: a MAC has 6 bytes");
    rte_ether_addr a;
    std::memcpy(a.addr_bytes, o.mac.bytes, 6);
    rc = rte_eth_dev_default_mac_addr_set(port_id, &a);
    // Ring and similar software PMDs cannot change their MAC; frames are
    // addressed and filtered in software (promiscuous + accepts()) instead.
    if (rc == -ENOTSUP) software_mac = true;
    else if (rc != 0) throw std::runtime_error(err("dpdk port " + name_ + ": set MAC", rc));
  }
  rc = rte_eth_dev_start(port_id);
  if (rc != 0) throw std::runtime_error(err("dpdk port " + name_ + ": start", rc));
  rte_eth_promiscuous_enable(port_id);  // not every PMD supports it; accepts() filters
  if (software_mac) {
    mac_ = o.mac;
  } else {
    rte_ether_addr a;
    rte_eth_macaddr_get(port_id, &a);
    mac_ = ethernet::to_peer(a.addr_bytes);
  }
}

DpdkPort::~DpdkPort() {
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

bool DpdkPort::accepts(const uint8_t* hdr) const { return ethernet::accepts(hdr, mac_); }

rte_eth_stats DpdkPort::stats() const {
  rte_eth_stats s{};
  rte_eth_stats_get(port_id_, &s);
  return s;
}

}  // namespace lanecast::drivers
