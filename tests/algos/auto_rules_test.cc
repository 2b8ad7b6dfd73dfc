// auto: the built-in rules, a rules file, and every way a rules file can be wrong.
#include <gtest/gtest.h>

#include "algos/auto/rules.h"

namespace lanecast::algos::autoselect {
namespace {

Situation at(uint64_t size, uint32_t nodes, uint16_t lanes = 1, bool mc = false, double spread = 1) {
  Situation s;
  s.message_bytes = size;
  s.nodes = nodes;
  s.lanes = lanes;
  s.multicast = mc;
  s.latency_spread = spread;
  return s;
}

TEST(AutoRules, DefaultsFollowTheSimulatorTable) {
  const Rules& r = Rules::defaults();
  EXPECT_EQ(r.choose(at(1 << 20, 2)), Algo::Linear);
  EXPECT_EQ(r.choose(at(1, 8)), Algo::Linear);
  EXPECT_EQ(r.choose(at(1, 128)), Algo::Binomial);
  EXPECT_EQ(r.choose(at(1 << 20, 4)), Algo::Bintree);
  EXPECT_EQ(r.choose(at(1 << 20, 8)), Algo::Symmetric);
  EXPECT_EQ(r.choose(at(64 << 10, 64)), Algo::Bintree);
  EXPECT_EQ(r.choose(at(1 << 20, 64, 1, false, 8.0)), Algo::Hypercube);
}

TEST(AutoRules, SameInputsSameChoice) {
  const Rules& r = Rules::defaults();
  for (uint32_t p = 1; p < 300; p += 7)
    for (uint64_t n = 0; n < (64u << 20); n = n * 3 + 1) EXPECT_EQ(r.choose(at(n, p)), r.choose(at(n, p)));
}

TEST(AutoRules, ParsesAFile) {
  const Rules r = Rules::parse(
      "# comment\n"
      "\n"
      "size < 2K and nodes >= 3 -> binomial   # trailing comment\n"
      "nomulticast and spread > 2.5 -> hypercube\n"
      "always -> chain\n",
      "test.rules");
  EXPECT_EQ(r.size(), 3u);
  EXPECT_EQ(r.choose(at(100, 5)), Algo::Binomial);
  EXPECT_EQ(r.choose(at(100, 2)), Algo::Chain);
  EXPECT_EQ(r.choose(at(1 << 20, 9, 1, false, 3)), Algo::Hypercube);
  EXPECT_EQ(r.choose(at(1 << 20, 9, 1, true, 3)), Algo::Chain);
}

TEST(AutoRules, NoMatchFallsBackToChain) {
  const Rules r = Rules::parse("nodes > 100 -> linear\n", "t");
  EXPECT_EQ(r.choose(at(10, 5)), Algo::Chain);
}

TEST(AutoRules, BadFilesSayWhereAndWhat) {
  struct Case { const char* text; const char* message; };
  const Case cases[] = {
      {"size < 2K linear\n", "t:1: a rule reads"},
      {"\n\nsise < 2K -> linear\n", "t:3: unknown condition 'sise'"},
      {"size =< 2K -> linear\n", "t:1: unknown operator '=<'"},
      {"size < lots -> linear\n", "t:1: 'lots' is not a number"},
      {"size < -> linear\n", "needs an operator and a number"},
      {"size < 2K or nodes > 3 -> linear\n", "expected 'and', found 'or'"},
      {"size < 2K and -> linear\n", "a condition must follow 'and'"},
      {"-> linear\n", "no condition before '->'"},
      {"always -> bintre\n", "t:1: unknown algorithm 'bintre'"},
      {"always -> chain chain\n", "expected one algorithm name"},
      {"# nothing\n", "t: no usable rule"},
  };
  for (const auto& c : cases) {
    try {
      Rules::parse(c.text, "t");
      ADD_FAILURE() << "accepted: " << c.text;
    } catch (const RulesError& e) {
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace lanecast::algos::autoselect
