#include "drivers/ethernet.h"
#include "drivers/group_filter.h"

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
  GroupFilter filter;
  EXPECT_TRUE(filter.accepts(h, me));
  EXPECT_FALSE(filter.accepts(h, you));  // addressed to someone else
  write_header(h, broadcast(), you);
  EXPECT_TRUE(filter.accepts(h, me));
  const uint8_t group[6] = {0x01, 0x00, 0x5e, 0x00, 0x00, 0x01};
  write_header(h, to_peer(group), you);
  EXPECT_FALSE(filter.accepts(h, me));  // a group not joined: another job's
  EXPECT_TRUE(filter.add(to_peer(group)));
  EXPECT_TRUE(filter.accepts(h, me));
  write_header(h, me, you);
  h[12] = 0x08;
  h[13] = 0x00;  // IPv4: not ours
  EXPECT_FALSE(filter.accepts(h, me));
}

TEST(Ethernet, GroupFilterCountsJoinsAndFillsUp) {
  GroupFilter f;
  const uint8_t a[6] = {0x03, 1, 2, 3, 4, 5}, b[6] = {0x07, 1, 2, 3, 4, 6};
  EXPECT_TRUE(f.add(to_peer(a)));    // new: program the device
  EXPECT_FALSE(f.add(to_peer(a)));   // joined again: nothing to program
  EXPECT_TRUE(f.add(to_peer(b)));
  EXPECT_EQ(f.list().size(), 2u);
  EXPECT_FALSE(f.remove(to_peer(a)));  // one join of a left
  EXPECT_TRUE(f.contains(a));
  EXPECT_TRUE(f.remove(to_peer(a)));   // the last: unprogram
  EXPECT_FALSE(f.contains(a));
  EXPECT_FALSE(f.remove(to_peer(a)));  // not joined: nothing
  ASSERT_EQ(f.list().size(), 1u);
  EXPECT_TRUE(f.list()[0] == to_peer(b));
  for (int i = 1; i < GroupFilter::kSlots; ++i) {
    const uint8_t m[6] = {0x0b, 0, 0, 0, 0, static_cast<uint8_t>(i)};
    EXPECT_TRUE(f.add(to_peer(m)));
  }
  const uint8_t one_more[6] = {0x0f, 0, 0, 0, 0, 0};
  EXPECT_THROW(f.add(to_peer(one_more)), std::length_error);
}

// Group MACs from a key: group and locally administered, never IPv6's 33:33,
// never broadcast, one per lane, the same for the same key.
TEST(Ethernet, GroupMacFromAKey) {
  GroupAddressSeed k;
  for (int i = 0; i < 16; ++i) k.bytes[i] = static_cast<uint8_t>(0x11 * i);
  const PeerAddress a = group_mac(k, 0), b = group_mac(k, 1);
  EXPECT_EQ(a.len, 6);
  EXPECT_TRUE(is_group(a.bytes));
  EXPECT_EQ(a.bytes[0] & 0x02, 0x02);  // locally administered
  EXPECT_FALSE(a == b);
  EXPECT_TRUE(a == group_mac(k, 0));
  GroupAddressSeed other = k;
  other.bytes[3] ^= 1;
  EXPECT_FALSE(a == group_mac(other, 0));
  k.bytes[0] = 0x30;  // would be 33: IPv6 multicast
  EXPECT_NE(group_mac(k, 0).bytes[0], 0x33);
  std::memset(k.bytes, 0xff, sizeof k.bytes);
  EXPECT_FALSE(is_broadcast(group_mac(k, 0).bytes));
}

}  // namespace
}  // namespace lanecast::drivers::ethernet
