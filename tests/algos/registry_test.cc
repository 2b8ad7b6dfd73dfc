// Registry: names and ids are unique and stable, lookups work both ways.
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <string>

#include "algos/registry.h"

namespace lanecast::algos {
namespace {

TEST(Registry, NamesAndIdsAreUniqueAndFound) {
  std::set<std::string> names;
  std::set<int> ids;
  for (const AlgoInfo& a : algorithms()) {
    EXPECT_TRUE(names.insert(std::string(a.name)).second) << a.name;
    EXPECT_TRUE(ids.insert(static_cast<int>(a.id)).second) << a.name;
    EXPECT_FALSE(a.summary.empty()) << a.name;
    ASSERT_EQ(algo_by_name(a.name), a.id);
    EXPECT_EQ(algo_info(a.id).name, a.name);
  }
  EXPECT_FALSE(algo_by_name("no-such-algorithm").has_value());
}

TEST(Registry, FoundationAlgorithmsKeepTheirIds) {
  EXPECT_EQ(algo_by_name("linear"), Algo::Linear);
  EXPECT_EQ(algo_by_name("binomial"), Algo::Binomial);
  EXPECT_EQ(algo_by_name("chain"), Algo::Chain);
  EXPECT_EQ(static_cast<int>(Algo::Linear), 1);
  EXPECT_EQ(static_cast<int>(Algo::Binomial), 2);
  EXPECT_EQ(static_cast<int>(Algo::Chain), 3);
}

TEST(Registry, BadLookupsThrow) {
  EXPECT_THROW(algo_info(static_cast<Algo>(0)), std::invalid_argument);
  PlanParams pp;
  pp.nodes = 3;
  const Plan plan(pp);
  EXPECT_THROW(make_machine(static_cast<Algo>(0), plan, 0), std::invalid_argument);
  EXPECT_THROW(make_machine(Algo::Chain, plan, 3), std::invalid_argument);
}

}  // namespace
}  // namespace lanecast::algos
