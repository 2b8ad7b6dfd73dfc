// DpdkPort over ring ethdevs (loopback: each queue's tx ring is its rx ring),
// and open()'s error paths and device removal.
#include "drivers/dpdk/dpdk_port.h"

#include <gtest/gtest.h>
#include <rte_dev.h>
#include <rte_eth_ring.h>
#include <rte_ring.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <set>
#include <stdexcept>
#include <thread>
#include <string>
#include <vector>

#include "drivers/ethernet.h"
#include "tests/drivers/test_env.h"

namespace lanecast::drivers {
namespace {

using test::frame_id;
using test::make_frame;
using test::pool;
using test::PoolGuard;

// A ring ethdev whose queue q sends into and receives from the same ring.
class Loopback {
 public:
  Loopback(const std::string& name, uint16_t lanes) : name_("net_ring_" + name) {
    for (uint16_t l = 0; l < lanes; ++l)
      rings_.push_back(rte_ring_create((name + "_" + std::to_string(l)).c_str(), 256, SOCKET_ID_ANY,
                                       RING_F_SP_ENQ | RING_F_SC_DEQ));
    id_ = rte_eth_from_rings(name.c_str(), rings_.data(), lanes, rings_.data(), lanes, SOCKET_ID_ANY);
  }
  ~Loopback() {
    uint16_t id;
    if (rte_eth_dev_get_port_by_name(name_.c_str(), &id) == 0) rte_eal_hotplug_remove("vdev", name_.c_str());
    for (rte_ring* r : rings_) rte_ring_free(r);
  }
  int id() const { return id_; }

 private:
  std::string name_;
  std::vector<rte_ring*> rings_;
  int id_;
};

DpdkPortOptions options(uint16_t lanes) {
  DpdkPortOptions o;
  o.lanes = lanes;
  o.rx_pool = pool();
  o.set_mac = true;
  o.mac = ethernet::node_mac(7, 0);
  return o;
}

TEST(DpdkPort, RingRoundTripOnEveryLane) {
  PoolGuard guard;
  {
    Loopback lb("lc_loop0", 2);
    ASSERT_GE(lb.id(), 0);
    DpdkPort port(static_cast<uint16_t>(lb.id()), options(2), /*detach_on_close=*/true);
    EXPECT_EQ(port.lanes(), 2);
    EXPECT_EQ(port.port_id(), lb.id());
    EXPECT_EQ(port.name(), "net_ring_lc_loop0");
    EXPECT_EQ(port.address(), ethernet::node_mac(7, 0));
    EXPECT_EQ(port.max_frame_bytes(), 1514u);
    EXPECT_EQ(port.link_header_bytes(), ethernet::kHeaderBytes);

    for (uint16_t lane = 0; lane < 2; ++lane) {
      rte_mbuf* tx[5];
      for (uint32_t i = 0; i < 5; ++i) {
        tx[i] = make_frame(port.address(), port.address(), 100 * lane + i, 200);
        ASSERT_NE(tx[i], nullptr);
      }
      ASSERT_EQ(port.tx_burst(lane, tx, 5), 5);
      rte_mbuf* rx[8];
      ASSERT_EQ(port.rx_burst(lane, rx, 8), 5);
      for (uint32_t i = 0; i < 5; ++i) {
        EXPECT_EQ(frame_id(rx[i]), 100 * lane + i);
        EXPECT_EQ(rx[i]->pkt_len, 200u);
        EXPECT_TRUE(port.accepts(rte_pktmbuf_mtod(rx[i], const uint8_t*)));
        rte_pktmbuf_free(rx[i]);
      }
      EXPECT_EQ(port.rx_burst(lane, rx, 8), 0);
    }
    const PortStats s = port.stats();
    EXPECT_EQ(s.tx_frames, 10u);
    EXPECT_EQ(s.rx_frames, 10u);
    EXPECT_TRUE(port.caps().tx_chained);  // the ring PMD takes chains
    EXPECT_FALSE(port.xstats().empty());

    uint8_t h[ethernet::kHeaderBytes];
    port.write_link_header(h, ethernet::node_mac(3, 0));
    EXPECT_FALSE(port.accepts(h));  // for node 3, not us
    EXPECT_EQ(0, std::memcmp(h + 6, port.address().bytes, 6));
  }
  // Removed with its vdev: the name is free again.
  uint16_t id;
  EXPECT_NE(rte_eth_dev_get_port_by_name("net_ring_lc_loop0", &id), 0);
  EXPECT_EQ(guard.now(), guard.start());
}

TEST(DpdkPort, BadOptionsThrowClearly) {
  Loopback lb("lc_loop1", 1);
  ASSERT_GE(lb.id(), 0);
  const auto id = static_cast<uint16_t>(lb.id());
  auto expect_throw = [&](DpdkPortOptions o, const std::string& text) {
    try {
      DpdkPort p(id, o);
      ADD_FAILURE() << "no throw, wanted: " << text;
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  };
  auto o = options(1);
  o.lanes = 0;
  expect_throw(o, "at least one lane");
  o = options(1);
  o.rx_pool = nullptr;
  expect_throw(o, "rx mempool missing");
  o = options(1);
  o.lanes = 2;  // the ring port has one queue pair
  expect_throw(o, "2 lanes requested, device has 1 rx / 1 tx queues");
  o = options(1);
  o.mac.len = 4;
  expect_throw(o, "a MAC has 6 bytes");
  o = options(1);
  o.max_frame_bytes = 20;
  expect_throw(o, "below Ethernet's 60");
  EXPECT_THROW(DpdkPort(4000, options(1)), std::invalid_argument);
  // A failed set-up leaves the port usable.
  DpdkPort ok(id, options(1));
  EXPECT_EQ(ok.lanes(), 1);
}

// What a port's devargs say about its receive buffers, before it is opened:
// af_packet copies a frame into one ring frame (framesz, 2048 by default) at
// offset 66 and posts no mbufs of the pool; other PMDs are limited by the MTU
// only and keep a ring of mbufs posted.
TEST(DpdkPort, KnowsItsReceiveLimitsFromTheDevargs) {
  EXPECT_EQ(DpdkPort::rx_frame_limit("net_af_packet0,iface=v0"), 2048u - 66u);
  EXPECT_EQ(DpdkPort::rx_frame_limit("net_af_packet0,iface=v0,framesz=4096,blocksz=4096"), 4096u - 66u);
  EXPECT_EQ(DpdkPort::rx_frame_limit("net_ring0"), 0u);
  EXPECT_EQ(DpdkPort::rx_buffer_bytes("net_af_packet0,iface=v0,framesz=9216"), 9216u - 32u);
  EXPECT_EQ(DpdkPort::rx_buffers_held("net_af_packet0,iface=v0"), 0u);
  EXPECT_GT(DpdkPort::rx_buffers_held("net_af_xdp0,iface=v0"), 0u);
}

TEST(DpdkPort, OpenNamesAMissingInterface) {
  try {
    DpdkPort::open("net_af_packet9,iface=lcnope0", options(1));
    FAIL() << "no throw";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "af_packet: interface lcnope0 not found");
  }
  EXPECT_THROW(DpdkPort::open("net_af_packet9", options(1)), std::invalid_argument);
  EXPECT_THROW(DpdkPort::open("", options(1)), std::invalid_argument);
  EXPECT_THROW(DpdkPort::open("net_no_such_driver0", options(1)), std::runtime_error);
}

// open() by devargs and removal on close, on the null PMD when it is installed.
TEST(DpdkPort, OpenProbesAndCloseRemovesTheDevice) {
  PoolGuard guard;
  for (int round = 0; round < 2; ++round) {
    std::unique_ptr<DpdkPort> p;
    try {
      p = DpdkPort::open("net_null_lc0", options(1));
    } catch (const std::runtime_error& e) {
      GTEST_SKIP() << "null PMD not available: " << e.what();
    }
    EXPECT_EQ(p->name(), "net_null_lc0");
    EXPECT_THROW(DpdkPort::open("net_null_lc0", options(1)), std::runtime_error);  // already open
    rte_mbuf* tx = make_frame(ethernet::broadcast(), p->address(), 1);
    ASSERT_NE(tx, nullptr);
    EXPECT_EQ(p->tx_burst(0, &tx, 1), 1);  // the null PMD frees it
  }
  EXPECT_EQ(guard.now(), guard.start());
}

// Two af_packet ports of one process on one interface (liblanecast-mpi: a
// group per communicator, each with its own port) each see every frame. The
// PMD asks the kernel to join its sockets to a fanout group named by pid and
// interface; both ports would ask for the same one and split the frames
// between them (drivers/dpdk/af_packet_fanout.cc gives each port its own).
// In a network namespace of the test's own, on its loopback.
TEST(DpdkPort, TwoAfPacketPortsOnOneInterfaceEachSeeEveryFrame) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: a network namespace of its own, and af_packet's CAP_NET_RAW";
  ASSERT_EQ(unshare(CLONE_NEWNET), 0) << "unshare(CLONE_NEWNET)";
  {
    const int s = socket(AF_INET, SOCK_DGRAM, 0);
    ifreq ifr{};
    std::strcpy(ifr.ifr_name, "lo");
    ifr.ifr_flags = IFF_UP;
    ASSERT_EQ(ioctl(s, SIOCSIFFLAGS, &ifr), 0) << "lo up";
    close(s);
  }
  PoolGuard guard;
  {
    DpdkPortOptions o;
    o.rx_pool = pool();
    o.rx_wakeup = false;
    std::unique_ptr<DpdkPort> a = DpdkPort::open("net_af_packet31,iface=lo", o);
    std::unique_ptr<DpdkPort> b = DpdkPort::open("net_af_packet32,iface=lo", o);
    constexpr uint32_t kFrames = 64;
    for (uint32_t id = 0; id < kFrames; ++id) {
      rte_mbuf* m = make_frame(ethernet::broadcast(), ethernet::node_mac(9, 0), 1000 + id);
      ASSERT_NE(m, nullptr);
      ASSERT_EQ(a->tx_burst(0, &m, 1), 1);
    }
    // Each port: the ids it received (a port sees a frame as it leaves and as
    // lo hands it back, or only the latter: at least once is what counts).
    std::set<uint32_t> seen[2];
    DpdkPort* ports[2] = {a.get(), b.get()};
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while ((seen[0].size() < kFrames || seen[1].size() < kFrames) && std::chrono::steady_clock::now() < until) {
      for (int p = 0; p < 2; ++p) {
        rte_mbuf* got[32];
        const uint16_t n = ports[p]->rx_burst(0, got, 32);
        for (uint16_t i = 0; i < n; ++i) {
          if (got[i]->pkt_len >= ethernet::kHeaderBytes + 4) {
            const uint32_t id = frame_id(got[i]);
            if (id >= 1000 && id < 1000 + kFrames) seen[p].insert(id);
          }
          rte_pktmbuf_free(got[i]);
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_EQ(seen[0].size(), kFrames) << "the first port missed frames";
    EXPECT_EQ(seen[1].size(), kFrames) << "the second port missed frames: the two share a fanout group?";
  }
  EXPECT_EQ(guard.now(), guard.start());
}

}  // namespace
}  // namespace lanecast::drivers
