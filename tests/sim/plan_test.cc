// `lanecast plan` through plan_main: usage errors, help, and the JSON report.
#include <gtest/gtest.h>

#include "tests/sim/plan_runner.h"

#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "algos/registry.h"
#include "apps/plan/plan_command.h"
#include "tests/sim/registered.h"

namespace lanecast::apps {
namespace {

using Outcome = test::PlanOutcome;
Outcome plan(std::vector<std::string> args) { return test::run_plan(std::move(args)); }

// Any registered algorithm will do for the tests of the command itself.
std::string first_algo() {
  return algos::algorithms().empty() ? "" : std::string(algos::algorithms()[0].name);
}

TEST(Plan, HelpNamesEveryOptionWithItsDefault) {
  const Outcome o = plan({"--help"});
  EXPECT_EQ(o.rc, 0);
  for (const char* opt : {"--algo", "--auto-rules", "--nodes", "--size", "--segment", "--t0", "--bw", "--lanes",
                          "--topology", "--order", "--mcast-loss", "--json", "--tx-order", "[default: 1400]",
                          "[default: 10]", "[default: 1250]"})
    EXPECT_NE(o.out.find(opt), std::string::npos) << opt;
}

TEST(Plan, BadInputIsExitTwoWithAMessage) {
  const std::string a = first_algo().empty() ? "all" : first_algo();
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--size", "1M"}, "--nodes is required"},
      {{"--nodes", "8"}, "--size is required"},
      {{"--nodes", "8", "--size", "1Q"}, "not a whole number"},
      {{"--nodes", "0", "--size", "1M"}, "--nodes"},
      {{"--nodes", "8", "--size", "1M", "--segment", "0"}, "--segment"},
      {{"--nodes", "8", "--size", "1M", "--bw", "-5"}, "--bw"},
      {{"--nodes", "8", "--size", "1M", "--root", "8"}, "--root 8 is outside"},
      {{"--nodes", "8", "--size", "1M", "--order", "form"}, "applies to --algo hypercube only"},
      {{"--nodes", "8", "--size", "1M", "--order", "random"}, "want id, form"},
      {{"--nodes", "8", "--size", "1M", "--mcast-loss", "0.5"}, "--mcast-loss"},
      {{"--nodes", "8", "--size", "1M", "--mcast-loss", "2"}, "outside"},
      {{"--nodes", "8", "--size", "1M", "--topology", "/nonexistent/topo"}, "cannot read"},
      {{"--nodes", "8", "--size", "1M", "--algo", "no-such-algo"}, "unknown algorithm 'no-such-algo'"},
      {{"--nodes", "8", "--size", "1M", "--frobnicate"}, "unknown option --frobnicate"},
      {{"--nodes", "8", "--size", "1M", "--json=yes"}, "takes no value"},
      {{"--nodes", "8", "--size"}, "needs a value"},
  };
  for (auto [args, want] : cases) {
    if (want.find("no-such-algo") == std::string::npos) args.insert(args.begin(), {"--algo", a});
    const Outcome o = plan(args);
    std::string joined;
    for (auto& s : args) joined += s + " ";
    EXPECT_EQ(o.rc, 2) << joined;
    EXPECT_NE(o.err.find(want), std::string::npos) << joined << "\n got: " << o.err;
    EXPECT_EQ(o.err.rfind("lanecast plan: ", 0), 0u) << o.err;
  }
}

// --stream: the stream model's table and JSON; its options only with it,
// and the broadcast's options it has no place for refused.
TEST(Plan, StreamPredictsRateAndLatency) {
  const Outcome o = plan({"--stream", "--nodes", "8", "--size", "64", "--msg-rate", "1000", "--messages", "50",
                          "--fanout", "1", "--t0", "10", "--bw", "1000", "--json"});
  ASSERT_EQ(o.rc, 0) << o.err;
  // A lone 64-byte message per batch (80 bytes: 0.08 us a copy) down a chain
  // of 7 hops: the last member holds it 7 x 10.08 us after it was published.
  for (const char* f : {"\"stream\":\"tree\"", "\"nodes\":8", "\"size\":64", "\"fanout\":1", "\"messages\":50",
                        "\"batches\":50", "\"depth\":7", "\"max_us\":70.56", "\"copies_per_msg\":7.0"})
    EXPECT_NE(o.out.find(f), std::string::npos) << f << "\n" << o.out;
  const Outcome text = plan({"--stream", "--nodes", "8,16", "--size", "64,4K", "--stream-multicast"});
  ASSERT_EQ(text.rc, 0) << text.err;
  EXPECT_NE(text.out.find("one multicast per batch"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("p99.9_us"), std::string::npos);
  const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      {{"--nodes", "8", "--size", "64", "--fanout", "2"}, "--fanout applies to --stream only"},
      {{"--nodes", "8", "--size", "64", "--msg-rate", "5"}, "--msg-rate applies to --stream only"},
      {{"--nodes", "8", "--size", "64", "--stream", "--algo", "chain"}, "--algo does not apply to --stream"},
      {{"--nodes", "8", "--size", "64", "--stream", "--lanes", "2"}, "--lanes does not apply to --stream"},
      {{"--nodes", "8", "--size", "64", "--stream", "--fanout", "0"}, "--fanout"},
      {{"--nodes", "8", "--size", "64", "--stream", "--messages", "0"}, "--messages"},
      {{"--nodes", "8", "--size", "64", "--stream", "--msg-rate", "-1"}, "--msg-rate"},
      {{"--nodes", "1", "--size", "64", "--stream"}, "at least 2 members"},
      {{"--nodes", "8", "--size", "64", "--stream", "--segment", "16"}, "record head"},
      {{"--nodes", "8", "--size", "64", "--stream", "--messages", "20000000"}, "--messages"},
      {{"--nodes", "1048576", "--size", "64", "--stream", "--messages", "10000000"}, "fewer messages or members"},
  };
  for (const auto& [args, want] : bad) {
    const Outcome b = plan(args);
    EXPECT_EQ(b.rc, 2) << want;
    EXPECT_NE(b.err.find(want), std::string::npos) << want << "\n got: " << b.err;
  }
}

TEST(Plan, TopologyMustFitTheGroup) {
  const std::string path = ::testing::TempDir() + "/plan_test_topology";
  std::ofstream(path) << "nodes 4\nsite a 0-1\nsite b 2-3\nlatency a b 1ms\n";
  const Outcome o = plan({"--nodes", "8", "--size", "1M", "--topology", path});
  EXPECT_EQ(o.rc, 2);
  EXPECT_NE(o.err.find("4 nodes"), std::string::npos) << o.err;
}

TEST(Plan, JsonHasTheIssueFields) {
  const std::string a = first_algo();
  ASSERT_FALSE(a.empty()) << "no algorithm is registered (algos/registry.cc)";
  const Outcome o = plan({"--algo", a, "--nodes", "5,3", "--size", "100K", "--json"});
  ASSERT_EQ(o.rc, 0) << o.err;
  for (const char* f : {"\"algo\":\"", "\"nodes\":5", "\"nodes\":3", "\"size\":102400", "\"segment\":1400",
                        "\"predicted_us\":", "\"rank_finish_us\":[", "\"bytes_sent\":[", "\"peers\":["})
    EXPECT_NE(o.out.find(f), std::string::npos) << f << "\n" << o.out;
  EXPECT_EQ(o.out.front(), '[');
  EXPECT_EQ(o.out.substr(o.out.size() - 2), "]\n");
}

TEST(Plan, FormHypercubeOrderFromTheTopology) {
  ASSERT_TRUE(test::registered("hypercube"));
  const std::string topo = std::string(LANECAST_SOURCE_DIR) + "/config/topologies/islands4.topo";
  const Outcome id = plan({"--algo", "hypercube", "--nodes", "16", "--size", "64K", "--topology", topo, "--json"});
  const Outcome form2 = plan({"--algo", "hypercube", "--nodes", "16", "--size", "64K", "--topology", topo,
                              "--order", "form2", "--json"});
  ASSERT_EQ(id.rc, 0) << id.err;
  ASSERT_EQ(form2.rc, 0) << form2.err;
  EXPECT_NE(form2.out.find("\"order\":\"form2\""), std::string::npos) << form2.out;
  auto predicted = [](const std::string& out) {
    const size_t at = out.find("\"predicted_us\":");
    return std::stod(out.substr(at + 15));
  };
  EXPECT_LT(predicted(form2.out), predicted(id.out));  // islands4 interleaves its islands
}

TEST(Plan, TextSummarisesLargeGroups) {
  const std::string a = first_algo();
  ASSERT_FALSE(a.empty()) << "no algorithm is registered (algos/registry.cc)";
  const Outcome small = plan({"--algo", a, "--nodes", "4", "--size", "10K"});
  ASSERT_EQ(small.rc, 0) << small.err;
  EXPECT_NE(small.out.find("finish_us"), std::string::npos) << small.out;  // one line per rank
  const Outcome large = plan({"--algo", a, "--nodes", "100", "--size", "10K"});
  ASSERT_EQ(large.rc, 0) << large.err;
  EXPECT_NE(large.out.find("median"), std::string::npos);
  EXPECT_EQ(large.out.find("finish_us"), std::string::npos) << large.out;
}

}  // namespace
}  // namespace lanecast::apps
