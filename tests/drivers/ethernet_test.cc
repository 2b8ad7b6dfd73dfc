#include "drivers/ethernet.h"

#include <gtest/gtest.h>

namespace lanecast::drivers::ethernet {
namespace {

TEST(Ethernet, NodeMacIsLocallyAdministeredUnicastNamingNodeAndLane) {
  const PeerAddress a = node_mac(0x1234, 7);
  ASSERT_EQ(a.len, 6);
  const uint8_t want[6] = {0x02, 0x4c, 0x43, 0x12, 0x34, 0x07};
  EXPECT_EQ(0, std::memcmp(a.bytes, want, 6));
  EXPECT_FALSE(is_group(a.bytes));
  EXPECT_TRUE(a.bytes[0] & 0x02);  // locally administered
  uint32_t node = 0;
  uint16_t lane = 0;
  ASSERT_TRUE(node_of_mac(a.bytes, &node));
  ASSERT_TRUE(lane_of_mac(a.bytes, &lane));
  EXPECT_EQ(node, 0x1234u);
  EXPECT_EQ(lane, 7);
  const uint8_t other[6] = {0x02, 0x00, 0x00, 0x12, 0x34, 0x07};
  EXPECT_FALSE(node_of_mac(other, &node));
  EXPECT_FALSE(lane_of_mac(other, &lane));
}

TEST(Ethernet, PeerAddressAndRteEtherAddrRoundTrip) {
  rte_ether_addr e{};
  const PeerAddress a = node_mac(65535, 1);
  ASSERT_TRUE(to_ether(a, &e));
  EXPECT_EQ(to_peer(e), a);
  PeerAddress wrong;
  wrong.len = 8;
  EXPECT_FALSE(to_ether(wrong, &e));
  EXPECT_EQ(to_peer(e), a);  // untouched
  EXPECT_TRUE(is_group(broadcast().bytes));
  ASSERT_TRUE(to_ether(broadcast(), &e));
  EXPECT_TRUE(rte_is_broadcast_ether_addr(&e));
}

TEST(Ethernet, HeaderWrittenAndAccepted) {
  const PeerAddress me = node_mac(1, 0), you = node_mac(2, 0);
  uint8_t h[kHeaderBytes];
  write_header(h, me, you);
  EXPECT_EQ(0, std::memcmp(h, me.bytes, 6));
  EXPECT_EQ(0, std::memcmp(h + 6, you.bytes, 6));
  EXPECT_EQ(h[12], 0x88);
  EXPECT_EQ(h[13], 0xB5);
  EXPECT_TRUE(is_lanecast(h));
  EXPECT_TRUE(accepts(h, me));
  EXPECT_FALSE(accepts(h, you));  // addressed to someone else
  write_header(h, broadcast(), you);
  EXPECT_TRUE(accepts(h, me));
  const uint8_t group[6] = {0x01, 0x00, 0x5e, 0x00, 0x00, 0x01};
  write_header(h, to_peer(group), you);
  EXPECT_TRUE(accepts(h, me));
  write_header(h, me, you);
  h[12] = 0x08;
  h[13] = 0x00;  // IPv4: not ours
  EXPECT_FALSE(accepts(h, me));
}

}  // namespace
}  // namespace lanecast::drivers::ethernet
