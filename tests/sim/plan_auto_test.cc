// `lanecast plan --algo auto`: the rules see the plan's own inputs, every
// built-in rule fires for some plan, and a rules file replaces them.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "algos/auto/rules.h"
#include "algos/registry.h"
#include "apps/plan/plan_auto.h"
#include "apps/plan/plan_options.h"
#include "tests/sim/plan_runner.h"

namespace lanecast::apps {
namespace {

using Outcome = test::PlanOutcome;
Outcome plan(std::vector<std::string> args) { return test::run_plan(std::move(args)); }

const std::string kIslands = std::string(LANECAST_SOURCE_DIR) + "/config/topologies/islands4.topo";
const std::string kShippedRules = std::string(LANECAST_SOURCE_DIR) + "/config/auto.rules";

// Every value of `"key":"..."` (or `"key":null`, as "null") in a JSON report, in order.
std::vector<std::string> strings(const std::string& out, const std::string& key) {
  std::vector<std::string> v;
  const std::string tag = "\"" + key + "\":";
  for (size_t at = out.find(tag); at != std::string::npos; at = out.find(tag, at + 1)) {
    const size_t from = at + tag.size();
    if (out.compare(from, 4, "null") == 0) {
      v.push_back("null");
    } else if (out[from] == '"') {
      v.push_back(out.substr(from + 1, out.find('"', from + 1) - from - 1));
    } else {
      v.push_back(out.substr(from, out.find_first_of(",}", from) - from));
    }
  }
  return v;
}

PlanConfig parse(std::vector<std::string> args) {
  args.insert(args.begin(), "plan");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return parse_plan_options(static_cast<int>(argv.size()), argv.data());
}

// Every field of the rules' Situation comes from the plan's inputs.
TEST(PlanAuto, SituationFromThePlansInputs) {
  const PlanConfig uniform = parse({"--algo", "auto", "--nodes", "8", "--size", "1M"});
  const algos::autoselect::Situation u = plan_situation(uniform, 8, 1 << 20);
  EXPECT_EQ(u.message_bytes, uint64_t{1} << 20);
  EXPECT_EQ(u.nodes, 8u);
  EXPECT_EQ(u.lanes, 1);
  EXPECT_TRUE(u.multicast);  // the simulator's switch copies multicasts
  EXPECT_EQ(u.latency_spread, 1.0);
  const PlanConfig islands =
      parse({"--algo", "auto", "--nodes", "16", "--size", "64K", "--lanes", "2", "--topology", kIslands,
             "--mcast-loss", "0.5"});
  const algos::autoselect::Situation i = plan_situation(islands, 16, 64 << 10);
  EXPECT_EQ(i.message_bytes, uint64_t{64} << 10);
  EXPECT_EQ(i.nodes, 16u);
  EXPECT_EQ(i.lanes, 2);
  EXPECT_TRUE(i.multicast);           // loss does not take multicast away
  EXPECT_EQ(i.latency_spread, 120.0);  // 6000 us between i1 and i3, 50 us inside an island
}

// One plan per built-in rule that makes it fire, by the rule's text: a rule
// added to or changed in kDefaultRules without a plan here fails below.
TEST(PlanAuto, EveryBuiltInRuleFiresAndPlanRunsItsChoice) {
  struct Case {
    std::string rule;
    std::vector<std::string> args;
  };
  const std::vector<Case> cases = {
      {"nodes <= 2 -> linear", {"--nodes", "2", "--size", "1M"}},
      {"size <= 1400 and nodes <= 64 -> linear", {"--nodes", "8", "--size", "1K"}},
      {"size <= 1400 -> binomial", {"--nodes", "100", "--size", "1K"}},
      {"multicast and size <= 64K -> mcast_chain", {"--nodes", "8", "--size", "64K"}},
      {"lanes >= 2 and size >= 64K -> multilane", {"--nodes", "8", "--size", "1M", "--lanes", "2"}},
      {"spread >= 4 -> hypercube", {"--nodes", "16", "--size", "1M", "--topology", kIslands}},
      {"nodes <= 4 -> bintree", {"--nodes", "4", "--size", "1M"}},
      {"nodes <= 16 and size >= 1M -> symmetric", {"--nodes", "16", "--size", "1M"}},
      {"nodes <= 8 -> symmetric", {"--nodes", "8", "--size", "128K"}},
      {"always -> bintree", {"--nodes", "64", "--size", "1M"}},
  };
  const algos::autoselect::Rules& rules = algos::autoselect::Rules::defaults();
  std::set<std::string> fired;
  for (const Case& k : cases) {
    std::vector<std::string> args = {"--algo", "auto", "--json"};
    args.insert(args.end(), k.args.begin(), k.args.end());
    const Outcome o = plan(args);
    ASSERT_EQ(o.rc, 0) << k.rule << ": " << o.err;
    const auto rule = strings(o.out, "rule"), chosen = strings(o.out, "chosen"), algo = strings(o.out, "algo");
    ASSERT_EQ(rule.size(), 1u) << o.out;
    EXPECT_EQ(rule[0], k.rule) << "a different rule fired";
    EXPECT_EQ(algo, std::vector<std::string>{"auto"});
    size_t i = 0;
    while (i < rules.size() && rules.text(i) != k.rule) ++i;
    ASSERT_LT(i, rules.size()) << "no built-in rule reads '" << k.rule << "'";
    EXPECT_EQ(chosen, std::vector<std::string>{std::string(algos::algo_info(rules.algo(i)).name)}) << k.rule;
    EXPECT_EQ(strings(o.out, "complete"), std::vector<std::string>{"true"}) << k.rule;
    fired.insert(rule[0]);
    // config/auto.rules is the built-in rules as a file to edit: it decides alike.
    args.insert(args.end(), {"--auto-rules", kShippedRules});
    const Outcome shipped = plan(args);
    ASSERT_EQ(shipped.rc, 0) << shipped.err;
    EXPECT_EQ(strings(shipped.out, "rule"), rule) << "config/auto.rules differs from the built-in rules";
  }
  ASSERT_GT(rules.size(), 0u);
  for (size_t i = 0; i < rules.size(); ++i)
    EXPECT_TRUE(fired.count(rules.text(i))) << "built-in rule '" << rules.text(i) << "' (built-in rules:"
                                            << rules.line(i) << ") never fires: add a plan that makes it fire";
}

TEST(PlanAuto, TextNamesTheChoiceAndTheRule) {
  const Outcome o = plan({"--algo", "auto", "--nodes", "4,64", "--size", "1M"});
  ASSERT_EQ(o.rc, 0) << o.err;
  EXPECT_NE(o.out.find("auto rules built in"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("auto -> bintree: 4 nodes"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("chosen by      built-in rules:8 'nodes <= 4 -> bintree' (lanes 1, multicast, latency spread 1)"),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("built-in rules:11 'always -> bintree'"), std::string::npos) << o.out;
  const size_t summary = o.out.find("# summary");
  ASSERT_NE(summary, std::string::npos) << o.out;
  EXPECT_NE(o.out.find("auto -> bintree", summary), std::string::npos) << o.out;
}

TEST(PlanAuto, RulesFileReplacesTheBuiltIn) {
  const std::string path = ::testing::TempDir() + "/plan_auto_test.rules";
  std::ofstream(path) << "# small ones down a chain\nsize < 2K -> chain\nnodes > 100 -> linear\n";
  const Outcome o = plan({"--algo", "auto", "--auto-rules", path, "--nodes", "8", "--size", "1K,64K", "--json"});
  ASSERT_EQ(o.rc, 0) << o.err;
  EXPECT_EQ(strings(o.out, "chosen"), (std::vector<std::string>{"chain", "chain"}));
  // 64K: no rule matches, so chain is the fallback, and the report says so.
  EXPECT_EQ(strings(o.out, "rule"), (std::vector<std::string>{"size < 2K -> chain", "null"}));
  EXPECT_EQ(strings(o.out, "rule_at"), (std::vector<std::string>{path + ":2", "null"}));
}

TEST(PlanAuto, BadRulesAreExitTwoWithFileAndLine) {
  const std::string path = ::testing::TempDir() + "/plan_auto_test_bad.rules";
  std::ofstream(path) << "size < 1K -> chain\nalways -> nope\n";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--algo", "auto", "--auto-rules", path}, path + ":2: unknown algorithm 'nope'"},
      {{"--algo", "auto", "--auto-rules", "/nonexistent/rules"}, "auto rules: cannot read /nonexistent/rules"},
      {{"--algo", "bintree", "--auto-rules", path}, "--auto-rules applies to --algo auto only"},
  };
  for (auto [args, want] : cases) {
    args.insert(args.end(), {"--nodes", "8", "--size", "1K"});
    const Outcome o = plan(args);
    EXPECT_EQ(o.rc, 2) << want;
    EXPECT_EQ(o.out, "") << "nothing printed before the error";
    EXPECT_EQ(o.err.rfind("lanecast plan: " + want, 0), 0u) << o.err;
  }
}

// The options of one algorithm apply where auto chooses it.
TEST(PlanAuto, OptionsOfTheChosenAlgorithmApply) {
  const Outcome o = plan({"--algo", "auto", "--nodes", "8", "--size", "64K", "--mcast-loss", "0.5", "--json"});
  ASSERT_EQ(o.rc, 0) << o.err;
  EXPECT_EQ(strings(o.out, "chosen"), std::vector<std::string>{"mcast_chain"});
  EXPECT_NE(strings(o.out, "multicast_lost"), std::vector<std::string>{"0"}) << o.out;
}

// --algo all is still the registered algorithms, one run each, none of them auto.
TEST(PlanAuto, AllIsEveryRegisteredAlgorithm) {
  const Outcome o = plan({"--algo", "all", "--nodes", "4", "--size", "4K", "--json"});
  ASSERT_EQ(o.rc, 0) << o.err;
  std::vector<std::string> names;
  for (const auto& a : algos::algorithms()) names.emplace_back(a.name);
  EXPECT_EQ(strings(o.out, "algo"), names);
  EXPECT_EQ(strings(o.out, "chosen"), names);
  EXPECT_EQ(strings(o.out, "rule"), std::vector<std::string>{});
}

}  // namespace
}  // namespace lanecast::apps
