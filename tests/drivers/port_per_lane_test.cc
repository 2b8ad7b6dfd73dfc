// PortPerLane: a member's NICs as the lanes of one port. Lane k's frames go
// out of NIC k and come in from NIC k; NICs with different addresses are
// refused (the engine addresses a peer by one address on every lane).
#include "drivers/lanes/port_per_lane.h"

#include <gtest/gtest.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <memory>
#include <stdexcept>
#include <vector>

#include "drivers/ethernet.h"
#include "drivers/ring/ring_port.h"
#include "tests/drivers/test_env.h"

namespace lanecast::drivers {
namespace {

using test::pool;

std::unique_ptr<Port> nic(const char* name, uint8_t last) {
  RingPort::Options o;
  const uint8_t mac[6] = {2, 0, 0, 0, 0, last};
  o.mac = ethernet::to_peer(mac);
  o.name = name;
  o.ring_size = 64;
  return std::make_unique<RingPort>(o);
}

TEST(PortPerLane, LaneKIsNicK) {
  std::vector<std::unique_ptr<Port>> nics;
  nics.push_back(nic("ppl_a0", 1));
  nics.push_back(nic("ppl_a1", 1));
  auto* n0 = static_cast<RingPort*>(nics[0].get());
  auto* n1 = static_cast<RingPort*>(nics[1].get());
  PortPerLane p(std::move(nics));
  EXPECT_EQ(p.lanes(), 2);
  EXPECT_EQ(p.name(), "ppl_a0+ppl_a1");

  rte_mbuf* m = rte_pktmbuf_alloc(pool());
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(p.tx_burst(1, &m, 1), 1);
  void* out = nullptr;
  EXPECT_EQ(rte_ring_dequeue(n0->tx_ring(0), &out), -ENOENT) << "lane 1 went out of NIC 0";
  ASSERT_EQ(rte_ring_dequeue(n1->tx_ring(0), &out), 0);
  EXPECT_EQ(out, m);

  // What arrives on NIC 0 is lane 0's.
  ASSERT_EQ(rte_ring_enqueue(n0->rx_ring(0), m), 0);
  rte_mbuf* got[4];
  EXPECT_EQ(p.rx_burst(1, got, 4), 0);
  ASSERT_EQ(p.rx_burst(0, got, 4), 1);
  EXPECT_EQ(got[0], m);
  rte_pktmbuf_free(m);
}

TEST(PortPerLane, RefusesNicsWithDifferentAddresses) {
  std::vector<std::unique_ptr<Port>> nics;
  nics.push_back(nic("ppl_b0", 1));
  nics.push_back(nic("ppl_b1", 2));
  EXPECT_THROW(PortPerLane p(std::move(nics)), std::invalid_argument);
}

}  // namespace
}  // namespace lanecast::drivers
