// Group seeds: random per group, agreed by every member of a joined group from
// the endpoint table alone, new with every epoch, and never the address of a
// group this process already holds.
#include "engine/group/address_seed.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "drivers/ethernet.h"

namespace lanecast::engine {
namespace {

bootstrap::EndpointTable table(uint32_t epoch, uint64_t incarnation0) {
  bootstrap::EndpointTable t;
  t.epoch = epoch;
  for (uint32_t r = 0; r < 4; ++r) {
    bootstrap::Endpoint e;
    e.rank = r;
    e.incarnation = r == 0 ? incarnation0 : 1000 + r;
    e.lanes.push_back(drivers::ethernet::node_mac(r, 0));
    t.members.push_back(e);
  }
  return t;
}

TEST(GroupAddressSeed, RandomSeedsDiffer) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    const drivers::GroupAddressSeed k = random_address_seed();
    seen.insert(std::string(reinterpret_cast<const char*>(k.bytes), sizeof k.bytes));
  }
  EXPECT_EQ(seen.size(), 1000u);
}

TEST(GroupAddressSeed, EveryMemberDerivesTheSameSeedAndANewEpochAnother) {
  const drivers::GroupAddressSeed a = address_seed_of(7, table(5, 42));
  EXPECT_TRUE(a == address_seed_of(7, table(5, 42)));        // the same table: the same seed
  EXPECT_FALSE(a == address_seed_of(8, table(5, 42)));       // another group id
  EXPECT_FALSE(a == address_seed_of(7, table(6, 42)));       // another epoch
  EXPECT_FALSE(a == address_seed_of(7, table(5, 43)));       // a member restarted
  bootstrap::EndpointTable moved = table(5, 42);
  moved.members[2].lanes[0] = drivers::ethernet::node_mac(9, 0);
  EXPECT_FALSE(a == address_seed_of(7, moved));              // static groups: other addresses
}

TEST(GroupAddressSeed, AClaimedAddressIsNotGivenTwice) {
  const drivers::GroupAddressSeed k = random_address_seed();
  std::string clash;
  std::optional<AddressSeedClaim> first = AddressSeedClaim::claim(k, 2, &clash);
  ASSERT_TRUE(first.has_value()) << clash;
  EXPECT_FALSE(AddressSeedClaim::claim(k, 1, &clash).has_value());
  EXPECT_NE(clash.find(drivers::format_address(drivers::ethernet::group_mac(k, 0))), std::string::npos) << clash;
  // Lane 1 of k is lane 0 of a seed one higher in its sixth byte: a clash too.
  drivers::GroupAddressSeed next = k;
  next.bytes[5] = static_cast<uint8_t>(next.bytes[5] + 1);
  EXPECT_FALSE(AddressSeedClaim::claim(next, 1, nullptr).has_value());
  const AddressSeedClaim fresh = AddressSeedClaim::claim_random(2);
  EXPECT_FALSE(fresh.seed() == k);
  first.reset();  // released: free again
  EXPECT_TRUE(AddressSeedClaim::claim(k, 2, nullptr).has_value());
}

}  // namespace
}  // namespace lanecast::engine
