// The kernel's receive filter on an af_packet port's sockets
// (drivers/dpdk/kernel_rx_filter.h): what the port's rx_burst returns -
// before any check of the engine - is only what a NIC's own filter would
// keep. Frames are sent by a second port over a veth pair in a network
// namespace of the test's own.
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <set>
#include <thread>

#include "drivers/dpdk/dpdk_port.h"
#include "drivers/dpdk/kernel_rx_filter.h"
#include "drivers/ethernet.h"
#include "tests/drivers/test_env.h"

namespace lanecast::drivers {
namespace {

using test::frame_id;
using test::make_frame;
using test::pool;

// Sends frame `id` to `dst` from `from`; `ethertype` other than lanecast's
// when asked.
void send(DpdkPort& from, const PeerAddress& dst, uint32_t id, uint16_t ethertype = ethernet::kEtherType) {
  rte_mbuf* m = make_frame(dst, from.address(), id, 100);
  ASSERT_NE(m, nullptr);
  auto* p = rte_pktmbuf_mtod(m, uint8_t*);
  p[12] = static_cast<uint8_t>(ethertype >> 8);
  p[13] = static_cast<uint8_t>(ethertype & 0xff);
  ASSERT_EQ(from.tx_burst(0, &m, 1), 1);
}

// Reads `port` until frame `marker` arrived (at most 5 s); adds every id
// it took to `seen`. A veth keeps order: the frames sent before the marker
// were either taken or dropped by then.
bool read_until(DpdkPort& port, uint32_t marker, std::set<uint32_t>* seen) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < until) {
    rte_mbuf* got[32];
    const uint16_t n = port.rx_burst(0, got, 32);
    bool done = false;
    for (uint16_t i = 0; i < n; ++i) {
      if (got[i]->pkt_len >= ethernet::kHeaderBytes + 4) {
        seen->insert(frame_id(got[i]));
        done |= frame_id(got[i]) == marker;
      }
      rte_pktmbuf_free(got[i]);
    }
    if (done) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

TEST(KernelRxFilter, AnAfPacketPortTakesOnlyItsMacBroadcastAndGroupsItJoined) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: a network namespace of its own, and af_packet's CAP_NET_RAW";
  ASSERT_EQ(unshare(CLONE_NEWNET), 0) << "unshare(CLONE_NEWNET)";
  ASSERT_EQ(std::system("ip link add lcfa type veth peer name lcfb && ip link set lcfa up && ip link set lcfb up"), 0);
  test::PoolGuard guard;
  {
    DpdkPortOptions o;
    o.rx_pool = pool();
    o.rx_wakeup = false;
    std::unique_ptr<DpdkPort> a = DpdkPort::open("net_af_packet41,iface=lcfa", o);
    std::unique_ptr<DpdkPort> b = DpdkPort::open("net_af_packet42,iface=lcfb", o);
    const uint8_t group_bytes[6] = {0x03, 0x6c, 0, 0, 0, 7}, other_bytes[6] = {0x02, 0x6c, 0, 0, 0, 99};
    const PeerAddress group = ethernet::to_peer(group_bytes), other = ethernet::to_peer(other_bytes);

    std::set<uint32_t> seen;
    send(*b, a->address(), 1);                  // its MAC: taken
    send(*b, ethernet::broadcast(), 2);         // broadcast (hellos): taken
    send(*b, group, 3);                         // a group it has not joined: dropped
    send(*b, other, 4);                         // another host's MAC (promiscuous mode): dropped
    send(*b, a->address(), 5, 0x0800);          // its MAC, another protocol: dropped
    send(*b, a->address(), 10);
    ASSERT_TRUE(read_until(*a, 10, &seen)) << "the port took nothing from its own MAC";
    ASSERT_EQ(a->join_group(0, group), "");
    send(*b, group, 6);                         // joined: taken
    send(*b, a->address(), 11);
    ASSERT_TRUE(read_until(*a, 11, &seen));
    a->leave_group(0, group);
    send(*b, group, 7);                         // left: dropped
    send(*b, a->address(), 12);
    ASSERT_TRUE(read_until(*a, 12, &seen));
    EXPECT_EQ(seen, (std::set<uint32_t>{1, 2, 6, 10, 11, 12}));
  }
  EXPECT_EQ(guard.now(), guard.start());
}

// The program alone: it refuses more addresses than its jumps reach.
TEST(KernelRxFilter, TooManyAddressesAreRefused) {
  std::vector<PeerAddress> many(49, ethernet::broadcast());
  EXPECT_THROW(rx_filter_program(many, ethernet::kEtherType, 1), std::length_error);
  many.resize(48);
  EXPECT_EQ(rx_filter_program(many, ethernet::kEtherType, 1).size(), 2u + 4 * 48 + 2);
}

}  // namespace
}  // namespace lanecast::drivers
