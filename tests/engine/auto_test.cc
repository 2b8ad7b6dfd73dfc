// `auto` in the engine: a group tells the rules everything they can name -
// the message size, the group size, its lanes, whether its ports multicast,
// and the spread of its latencies - and each built-in rule fires for a group
// made to match it, picks its algorithm, and that broadcast delivers the
// root's bytes. (The engine once filled only size and nodes: a two-lane group
// got bintree where the rules say multilane.)
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "algos/auto/rules.h"
#include "engine/api/member_internals.h"
#include "tests/engine/group_env.h"

namespace lanecast {
namespace {

using test::engine;

const std::string kTopologies = std::string(LANECAST_SOURCE_DIR) + "/config/topologies/";

struct RuleCase {
  std::string rule;  // the built-in rule's text it must make fire
  uint32_t nodes;
  uint16_t lanes;
  uint64_t size;
  std::string topology;  // file under config/topologies/, or none
};

// One group per built-in rule. A rule added to the built-in set without a
// case here fails EveryBuiltInRuleFiresInTheEngine.
const std::vector<RuleCase>& cases() {
  static const std::vector<RuleCase> c{
      {"nodes <= 2 -> linear", 2, 1, 1 << 20, ""},
      {"size <= 1400 and nodes <= 64 -> linear", 8, 1, 1000, ""},
      {"size <= 1400 -> binomial", 65, 1, 1000, ""},
      {"multicast and size <= 64K -> mcast_chain", 8, 1, 8 << 10, ""},
      {"lanes >= 2 and size >= 64K -> multilane", 8, 2, 1 << 20, ""},
      {"spread >= 4 -> hypercube", 16, 1, 256 << 10, "two_sites.topo"},
      {"nodes <= 4 -> bintree", 4, 1, 1 << 20, ""},
      {"nodes <= 16 and size >= 1M -> symmetric", 12, 1, 1 << 20, ""},
      {"nodes <= 8 -> symmetric", 8, 1, 128 << 10, ""},
      {"always -> bintree", 24, 1, 128 << 10, ""},
  };
  return c;
}

const RuleCase* case_for(const std::string& rule) {
  for (const auto& c : cases())
    if (c.rule == rule) return &c;
  return nullptr;
}

TEST(Auto, EveryBuiltInRuleFiresInTheEngine) {
  const auto& rules = algos::autoselect::Rules::defaults();
  std::mt19937_64 rng(test::test_seed());
  for (size_t i = 0; i < rules.size(); ++i) {
    SCOPED_TRACE("rule " + std::to_string(i) + ": " + rules.text(i));
    const RuleCase* c = case_for(rules.text(i));
    ASSERT_NE(c, nullptr) << "no group here makes this built-in rule fire: add one to cases()";
    GroupOptions o;
    o.nodes = c->nodes;
    o.lanes = c->lanes;
    o.algo = "auto";
    o.max_message_bytes = c->size;
    if (!c->topology.empty()) o.topology_file = kTopologies + c->topology;
    auto g = engine().create_local_group(o);
    const auto st = situation_of(g->member(0), c->size);
    EXPECT_EQ(st.lanes, c->lanes);
    EXPECT_TRUE(st.multicast) << "the fabric's switch copies multicast frames";
    ASSERT_EQ(rules.first_match(st), i) << "a different rule fired";
    ASSERT_EQ(resolve_algo(g->member(0), "auto", c->size), rules.algo(i));
    std::vector<std::vector<std::byte>> bufs(c->nodes, std::vector<std::byte>(c->size));
    test::fill(bufs[0], rng);
    ASSERT_EQ(test::broadcast_all(*g, 0, bufs), "");
    EXPECT_TRUE(test::verified(bufs, 0));
  }
  for (const auto& c : cases()) {
    bool built_in = false;
    for (size_t i = 0; i < rules.size(); ++i) built_in = built_in || rules.text(i) == c.rule;
    EXPECT_TRUE(built_in) << "'" << c.rule << "' is not a built-in rule (renamed?)";
  }
}

TEST(Auto, TheSituationCarriesLanesMulticastAndSpread) {
  GroupOptions o;
  o.nodes = 16;
  o.lanes = 2;
  o.algo = "auto";
  o.max_message_bytes = 1 << 20;
  auto g = engine().create_local_group(o);
  auto st = situation_of(g->member(3), 1 << 20);
  EXPECT_EQ(st.message_bytes, 1u << 20);
  EXPECT_EQ(st.nodes, 16u);
  EXPECT_EQ(st.lanes, 2u);
  EXPECT_TRUE(st.multicast);
  EXPECT_DOUBLE_EQ(st.latency_spread, 1.0);
  // The case: two lanes, auto, 1 MiB -> multilane.
  EXPECT_EQ(resolve_algo(g->member(0), "auto", 1 << 20), algos::Algo::Multilane);

  o.lanes = 1;
  o.topology_file = kTopologies + "two_sites.topo";  // 10 us inside a site, 1.5 ms between
  auto t = engine().create_local_group(o);
  EXPECT_DOUBLE_EQ(situation_of(t->member(0), 1 << 20).latency_spread, 150.0);
}

TEST(Auto, ABadTopologyIsRefusedClearly) {
  GroupOptions o;
  o.nodes = 8;  // two_sites.topo is written for 16
  o.topology_file = kTopologies + "two_sites.topo";
  EXPECT_THROW(engine().create_local_group(o), std::invalid_argument);
  o.topology_file = kTopologies + "no_such.topo";
  EXPECT_THROW(engine().create_local_group(o), std::invalid_argument);
}

}  // namespace
}  // namespace lanecast
