// Group files: a full file and the defaults read as written, the shipped
// examples parse, and every kind of mistake is an invalid_argument that
// points at its line ("t.toml:LINE: ") and names the problem.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>

#include "engine/group/group_shape.h"
#include "lanecast/group_spec.h"
#include "lanecast/lanecast.h"

namespace lanecast {
namespace {

const std::string kExamples = std::string(LANECAST_SOURCE_DIR) + "/config/groups/";

GroupSpec parse(const std::string& text) { return parse_group_file(text, "t.toml"); }

// 1-based line of the first line of `text` containing `needle`, so a test
// names the line it means instead of counting.
int line_of(const std::string& text, std::string_view needle) {
  const size_t at = text.find(needle);
  EXPECT_NE(at, std::string::npos) << "no '" << needle << "' in the test's text";
  int line = 1;
  for (size_t i = 0; i < at && i < text.size(); ++i) line += text[i] == '\n';
  return line;
}

void expect_error(const std::string& text, int line, std::string_view word) {
  SCOPED_TRACE(text);
  try {
    parse(text);
    ADD_FAILURE() << "parsed without an error";
  } catch (const std::invalid_argument& e) {
    const std::string message = e.what();
    const std::string where = "t.toml:" + std::to_string(line) + ": ";
    EXPECT_EQ(message.rfind(where, 0), 0u) << message << "\n  should start with " << where;
    EXPECT_NE(message.find(word), std::string::npos) << message << "\n  should say " << word;
  }
}

// Expects the error at the line holding `needle`.
void expect_error_at(const std::string& text, std::string_view needle, std::string_view word) {
  expect_error(text, line_of(text, needle), word);
}

// A group of `n` members on one lane, discovery bootstrap; `group_extra`
// goes into [group], `member_extra` into every [[member]].
std::string group_of(int n, const std::string& group_extra = "", const std::string& member_extra = "") {
  std::string text = "[group]\nname = \"g\"\nbootstrap = \"discovery\"\n" + group_extra + "\n";
  for (int r = 0; r < n; ++r)
    text += "[[member]]\nrank = " + std::to_string(r) + "\nlanes = [\"net_null" + std::to_string(r) + "\"]\n" +
            member_extra + "\n";
  return text;
}

const std::string kFull = R"([group]
name = "full"
id = 7
epoch = 9
bootstrap = "static"
bootstrap_timeout_ms = 2500.5
lanes = 2
algo = "chain"
segment = 1400
max_message = "8M"
window = 64
peer_timeout_ms = 1500
port_rate_mbit = 200
port_overhead = 0
rate_control = true
stream_multicast = true
stream_repair_us = 1500
site_latency_us = [[0, 2000.5], [1999, 0]]

[[member]]   # given out of order: members are indexed by rank
rank = 1
site = 1
lanes = ["net_af_packet1,iface=v1", "net_af_packet3,iface=w1"]
macs = ["02:00:00:00:00:02", "02:00:00:00:00:02"]

[[member]]
rank = 0
lanes = ["net_af_packet0,iface=v0", "net_af_packet2,iface=w0"]
macs = ["02:AB:cd:00:01:01", "02:ab:CD:00:01:01"]
)";

TEST(GroupFile, FullFileReadsEveryField) {
  const GroupSpec g = parse(kFull);
  EXPECT_EQ(g.name, "full");
  EXPECT_EQ(g.id, 7u);
  EXPECT_EQ(g.epoch, 9u);
  EXPECT_EQ(g.bootstrap, "static");
  EXPECT_DOUBLE_EQ(g.bootstrap_timeout_ms, 2500.5);
  EXPECT_EQ(g.lanes, 2u);
  EXPECT_EQ(g.algo, "chain");
  EXPECT_EQ(g.segment_bytes, 1400u);
  EXPECT_EQ(g.max_message_bytes, 8u << 20);
  EXPECT_EQ(g.window, 64u);
  EXPECT_DOUBLE_EQ(g.peer_timeout_ms, 1500);
  EXPECT_DOUBLE_EQ(g.port_rate_mbit, 200);
  EXPECT_EQ(g.port_overhead_bytes, 0u);
  EXPECT_EQ(g.rate_control, GroupSpec::RateControl::On);
  EXPECT_TRUE(g.streams.multicast);
  EXPECT_DOUBLE_EQ(g.streams.multicast_repair_us, 1500);
  const std::vector<std::vector<double>> latency = {{0, 2000.5}, {1999, 0}};
  EXPECT_EQ(g.site_latency_us, latency);
  EXPECT_EQ(g.source, "");  // only load_group_file knows a file
  ASSERT_EQ(g.members.size(), 2u);
  EXPECT_EQ(g.members[0].rank, 0u);
  EXPECT_EQ(g.members[0].site, 0u);
  EXPECT_EQ(g.members[0].lanes, (std::vector<std::string>{"net_af_packet0,iface=v0", "net_af_packet2,iface=w0"}));
  EXPECT_EQ(g.members[0].macs, (std::vector<std::string>{"02:AB:cd:00:01:01", "02:ab:CD:00:01:01"}));
  EXPECT_EQ(g.members[1].rank, 1u);
  EXPECT_EQ(g.members[1].site, 1u);
  EXPECT_EQ(g.members[1].lanes, (std::vector<std::string>{"net_af_packet1,iface=v1", "net_af_packet3,iface=w1"}));
  EXPECT_EQ(g.members[1].macs, (std::vector<std::string>{"02:00:00:00:00:02", "02:00:00:00:00:02"}));
}

TEST(GroupFile, DefaultsAreGroupSpecs) {
  const GroupSpec g = parse("[group]\nname = \"d\"\nepoch = 1\n[[member]]\nrank = 0\nlanes = [\"net_null0\"]\n"
                            "macs = [\"02:00:00:00:00:01\"]\n");
  const GroupSpec defaults;
  EXPECT_EQ(g.name, "d");
  EXPECT_EQ(g.id, 1u);
  EXPECT_EQ(g.bootstrap, "static");
  EXPECT_EQ(g.bootstrap_timeout_ms, defaults.bootstrap_timeout_ms);
  EXPECT_EQ(g.lanes, 1u);
  EXPECT_EQ(g.algo, "auto");
  EXPECT_EQ(g.segment_bytes, 0u);
  EXPECT_EQ(g.max_message_bytes, 16u << 20);
  EXPECT_EQ(g.window, 128u);
  EXPECT_EQ(g.peer_timeout_ms, 3000);
  EXPECT_EQ(g.port_rate_mbit, 0);
  EXPECT_EQ(g.port_overhead_bytes, 24u);
  EXPECT_EQ(g.rate_control, GroupSpec::RateControl::Auto);
  EXPECT_TRUE(g.finds_rate()) << "no port_rate_mbit: each lane finds its rate";
  EXPECT_FALSE(g.streams.multicast);
  EXPECT_DOUBLE_EQ(g.streams.multicast_repair_us, 0);
  EXPECT_TRUE(g.site_latency_us.empty());
  ASSERT_EQ(g.members.size(), 1u);
  EXPECT_EQ(g.members[0].site, 0u);

  const GroupSpec d = parse(group_of(3));
  EXPECT_EQ(d.epoch, 0u);  // the discovery bootstrap picks it
  ASSERT_EQ(d.members.size(), 3u);
  EXPECT_TRUE(d.members[2].macs.empty());
}

TEST(GroupFile, ExamplesParse) {
  for (const char* name : {"testbed8", "testbed8x2", "two_sites", "static2", "pmix8", "verbs4"}) {
    SCOPED_TRACE(name);
    const std::string path = kExamples + name + ".toml";
    const GroupSpec g = load_group_file(path);
    EXPECT_EQ(g.name, name);
    EXPECT_EQ(g.source, path);
  }
  const GroupSpec t8 = load_group_file(kExamples + "testbed8.toml");
  EXPECT_EQ(t8.bootstrap, "discovery");
  EXPECT_EQ(t8.port_rate_mbit, 200);
  EXPECT_EQ(t8.port_overhead_bytes, 0u);
  ASSERT_EQ(t8.members.size(), 8u);
  EXPECT_EQ(t8.members[5].lanes, (std::vector<std::string>{"net_af_packet5,iface=v5,qdisc_bypass=0"}));

  const GroupSpec x2 = load_group_file(kExamples + "testbed8x2.toml");
  EXPECT_EQ(x2.lanes, 2u);
  ASSERT_EQ(x2.members.size(), 8u);
  EXPECT_EQ(x2.members[3].lanes, (std::vector<std::string>{"net_af_packet3,iface=v3,qdisc_bypass=0",
                                                           "net_af_packet11,iface=w3,qdisc_bypass=0"}));

  const GroupSpec sites = load_group_file(kExamples + "two_sites.toml");
  ASSERT_EQ(sites.members.size(), 8u);
  for (uint32_t r = 0; r < 8; ++r) EXPECT_EQ(sites.members[r].site, __builtin_popcount(r) % 2);
  EXPECT_EQ(sites.site_latency_us, (std::vector<std::vector<double>>{{0, 2000}, {2000, 0}}));
  EXPECT_TRUE(sites.use_sites);
  EXPECT_TRUE(sites.emulate_latency);

  const GroupSpec s2 = load_group_file(kExamples + "static2.toml");
  EXPECT_EQ(s2.bootstrap, "static");
  EXPECT_EQ(s2.epoch, 1u);
  ASSERT_EQ(s2.members.size(), 2u);
  EXPECT_EQ(s2.members[1].macs, (std::vector<std::string>{"02:00:00:00:00:02"}));

  const GroupSpec p8 = load_group_file(kExamples + "pmix8.toml");
  EXPECT_EQ(p8.bootstrap, "pmix");
  EXPECT_EQ(p8.epoch, 0u);  // the bootstrap picks it
  ASSERT_EQ(p8.members.size(), 8u);
  EXPECT_TRUE(p8.members[7].macs.empty());
}

TEST(GroupFile, UnreadableFileIsNamed) {
  const std::string path = kExamples + "no_such_group.toml";
  try {
    load_group_file(path);
    ADD_FAILURE() << "read a file that does not exist";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind(path + ": ", 0), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find("cannot read"), std::string::npos) << e.what();
  }
  EXPECT_THROW(load_group_file(kExamples), std::invalid_argument);  // a directory
}

// auto_rules names a rules file for "auto" (what `lanecast tune` writes): a
// relative path is from the group file, as key_file's; an empty one is
// refused with its line. The rules themselves are read when the group is
// joined.
TEST(GroupFile, AutoRulesAreAFileBesideTheGroupFile) {
  EXPECT_EQ(parse(group_of(2)).auto_rules_file, "");
  EXPECT_EQ(parse(group_of(2, "auto_rules = \"/etc/lanecast/tuned.rules\"")).auto_rules_file,
            "/etc/lanecast/tuned.rules");
  const std::string dir = ::testing::TempDir() + "lanecast_auto_rules";
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/g.toml";
  std::ofstream(path) << group_of(2, "auto_rules = \"tuned.rules\"");
  EXPECT_EQ(load_group_file(path).auto_rules_file, dir + "/tuned.rules");
  const std::string empty = group_of(2, "auto_rules = \"\"");
  expect_error_at(empty, "auto_rules", "group.auto_rules is empty");
  std::filesystem::remove_all(dir);
}

TEST(GroupFile, TomlSyntaxErrorHasItsLine) {
  expect_error("[group]\nname = \"g\"\nid = = 3\n", 3, "TOML");
  expect_error("[group]\nname = \"g\"\nname = \"h\"\n", 3, "TOML");
}

TEST(GroupFile, UnknownKeysAnywhere) {
  const std::string in_group = group_of(1, "windwo = 4\n");
  expect_error_at(in_group, "windwo", "unknown key 'windwo'");
  expect_error_at(in_group, "windwo", "window");  // lists what is allowed
  expect_error_at(group_of(2, "", "iface = \"v0\"\n"), "iface", "unknown key 'iface'");
  expect_error_at("nodes = 3\n" + group_of(1), "nodes", "unknown key 'nodes'");
  expect_error_at(group_of(1) + "[groups]\nname = \"x\"\n", "[groups]", "unknown key 'groups'");
  // Of two unknown keys the first in the file is reported, whatever their names.
  expect_error_at(group_of(1, "zz = 1\naa = 2\n"), "zz", "unknown key 'zz'");
}

// A group told no rate finds it; one told a rate paces at it; either may
// say otherwise.
TEST(GroupFile, LanesFindTheirRateUnlessTheFileGivesOne) {
  const auto finds = [](const std::string& extra) { return parse(group_of(2, extra)).finds_rate(); };
  EXPECT_TRUE(finds(""));
  EXPECT_TRUE(finds("port_rate_mbit = 0\n"));
  EXPECT_FALSE(finds("port_rate_mbit = 200\n")) << "told the rate: paced at it";
  EXPECT_TRUE(finds("port_rate_mbit = 200\nrate_control = true\n")) << "found, 200 Mbit/s the ceiling";
  EXPECT_FALSE(finds("rate_control = false\n")) << "neither told nor found: not paced";
}

TEST(GroupFile, WrongTypes) {
  expect_error_at(group_of(1, "id = \"7\"\n"), "id =", "must be an integer");
  expect_error_at(group_of(1, "lanes = 1.0\n"), "lanes = 1.0", "must be an integer");
  expect_error_at(group_of(1, "epoch = true\n"), "epoch", "must be an integer");
  expect_error_at(group_of(1, "window = [1]\n"), "window", "must be an integer");
  expect_error_at("[group]\nname = 3\n[[member]]\nrank = 0\nlanes = [\"x\"]\n", "name", "must be a string");
  expect_error_at(group_of(1, "algo = 2\n"), "algo", "must be a string");
  expect_error_at(group_of(1, "rate_control = \"yes\"\n"), "rate_control", "must be true or false");
  expect_error_at(group_of(1, "stream_multicast = 1\n"), "stream_multicast", "must be true or false");
  expect_error_at(group_of(1, "stream_repair_us = \"1ms\"\n"), "stream_repair_us", "must be a number");
  expect_error_at(group_of(1, "stream_repair_us = 2000000\n"), "stream_repair_us", "out of range");
  expect_error_at(group_of(1, "stream_repair_us = -1\n"), "stream_repair_us", "");
  expect_error_at(group_of(1, "peer_timeout_ms = \"3s\"\n"), "peer_timeout_ms", "must be a number");
  expect_error_at(group_of(1, "site_latency_us = 3\n"), "site_latency_us", "must be an array");
  expect_error_at(group_of(1, "site_latency_us = [1]\n"), "site_latency_us", "must be an array");
  expect_error_at(group_of(1, "site_latency_us = [[0, \"1\"], [1, 0]]\n"), "site_latency_us", "must be a number");
  expect_error_at(group_of(1, "max_message = 1.5\n"), "max_message", "must be an integer or a string");
  expect_error_at(group_of(1, "", "site = \"a\"\n"), "site", "must be an integer");
  expect_error_at("[group]\nname = \"g\"\nbootstrap = \"discovery\"\n[[member]]\nrank = \"0\"\nlanes = [\"x\"]\n",
                  "rank", "must be an integer");
  expect_error_at("[group]\nname = \"g\"\nbootstrap = \"discovery\"\n[[member]]\nrank = 0\nlanes = \"x\"\n",
                  "lanes", "must be an array");
  expect_error_at("[group]\nname = \"g\"\nbootstrap = \"discovery\"\n[[member]]\nrank = 0\nlanes = [3]\n",
                  "lanes", "must be a string");
  expect_error_at(group_of(1, "", "macs = \"02:00:00:00:00:01\"\n"), "macs", "must be an array");
  expect_error_at("group = 3\n", "group", "must be a table");
  expect_error_at("member = 3\n[group]\nname = \"g\"\nbootstrap = \"pmix\"\n", "member",
                  "must be an array of tables");
}

TEST(GroupFile, IntegersOutOfRange) {
  expect_error_at(group_of(1, "id = 0\n"), "id", "out of range");
  expect_error_at(group_of(1, "id = 4294967296\n"), "id", "out of range");
  EXPECT_EQ(parse(group_of(1, "id = 4294967295\n")).id, 4294967295u);
  expect_error_at(group_of(1, "epoch = -1\n"), "epoch", "out of range");
  expect_error_at(group_of(1, "epoch = 4294967296\n"), "epoch", "out of range");
  EXPECT_EQ(parse(group_of(1, "epoch = 4294967295\n")).epoch, 4294967295u);
  expect_error_at(group_of(1, "lanes = 0\n"), "lanes = 0", "1..4");
  expect_error_at(group_of(1, "lanes = 5\n"), "lanes = 5", "out of range");
  expect_error_at(group_of(1, "window = 0\n"), "window", "1..4096");
  expect_error_at(group_of(1, "window = 4097\n"), "window", "out of range");
  EXPECT_EQ(parse(group_of(1, "window = 4096\n")).window, 4096u);
  expect_error_at(group_of(1, "segment = 63\n"), "segment", "64..9000");
  expect_error_at(group_of(1, "segment = 9001\n"), "segment", "out of range");
  expect_error_at(group_of(1, "segment = -1\n"), "segment", "out of range");
  EXPECT_EQ(parse(group_of(1, "segment = 64\n")).segment_bytes, 64u);
  EXPECT_EQ(parse(group_of(1, "segment = 9000\n")).segment_bytes, 9000u);
  expect_error_at(group_of(1, "port_overhead = 1025\n"), "port_overhead", "0..1024");
  expect_error_at(group_of(1, "port_overhead = -1\n"), "port_overhead", "out of range");
  expect_error_at(group_of(1, "", "site = -1\n"), "site", "out of range");
}

TEST(GroupFile, NumbersOutOfRange) {
  expect_error_at(group_of(1, "peer_timeout_ms = 0\n"), "peer_timeout_ms", "> 0");
  expect_error_at(group_of(1, "peer_timeout_ms = -5.0\n"), "peer_timeout_ms", "out of range");
  expect_error_at(group_of(1, "bootstrap_timeout_ms = 0.0\n"), "bootstrap_timeout_ms", "> 0");
  expect_error_at(group_of(1, "bootstrap_timeout_ms = inf\n"), "bootstrap_timeout_ms", "finite");
  expect_error_at(group_of(1, "port_rate_mbit = -1\n"), "port_rate_mbit", ">= 0");
  expect_error_at(group_of(1, "port_rate_mbit = nan\n"), "port_rate_mbit", "finite");
  expect_error_at(group_of(1, "port_rate_mbit = inf\n"), "port_rate_mbit", "out of range");
  EXPECT_EQ(parse(group_of(1, "port_rate_mbit = 0\n")).port_rate_mbit, 0);
  EXPECT_EQ(parse(group_of(1, "peer_timeout_ms = 1.25\n")).peer_timeout_ms, 1.25);
}

// An integer no double holds exactly (2^53 + 1) where a number goes: toml++
// gives no double for it, and the reader threw std::bad_optional_access.
TEST(GroupFile, IntegersBeyondADoublesPrecisionAreNumbers) {
  const std::string big = "9007199254740993";
  EXPECT_EQ(parse(group_of(1, "port_rate_mbit = " + big + "\n")).port_rate_mbit, 9007199254740992.0);
  const GroupSpec s = parse(group_of(2, "site_latency_us = [[0, " + big + "], [" + big + ", 0]]\n", "site = 0\n"));
  EXPECT_EQ(s.site_latency_us[0][1], 9007199254740992.0);
  expect_error_at(group_of(1, "mcast_root_delay_us = " + big + "\n"), "mcast_root_delay_us", "not below the peer timeout");
  expect_error_at(group_of(1, "stream_report_us = " + big + "\n"), "stream_report_us", "out of range");
  expect_error_at(group_of(1, "mcast_loss = " + big + "\n"), "mcast_loss", "out of range");
}

// Timeouts are milliseconds from 1 to 3600000 (1 ms to 1 hour): a huge one
// would overflow its conversion to nanoseconds (a peer timeout of 0 ns: every
// broadcast failed at once), a tiny one is shorter than a retransmission.
TEST(GroupFile, TimeoutsAreOneMillisecondToOneHour) {
  for (const char* key : {"peer_timeout_ms", "bootstrap_timeout_ms"}) {
    SCOPED_TRACE(key);
    const std::string k = key;
    for (const char* v : {"1e30", "1.8e13", "3600000.5", "0.5", "0.999", "1e-300"})
      expect_error_at(group_of(1, k + " = " + v + "\n"), key, "out of range; allowed a finite number > 0 of milliseconds, 1 .. 3600000");
    expect_error_at(group_of(1, k + " = 99999999999999999\n"), key, "1 .. 3600000");  // an integer, as large
    const GroupSpec lo = parse(group_of(1, k + " = 1\n")), hi = parse(group_of(1, k + " = 3600000\n"));
    EXPECT_EQ(k == "peer_timeout_ms" ? lo.peer_timeout_ms : lo.bootstrap_timeout_ms, 1);
    EXPECT_EQ(k == "peer_timeout_ms" ? hi.peer_timeout_ms : hi.bootstrap_timeout_ms, 3'600'000);
  }
  // mcast_root_delay_us is held below the peer timeout: within range too.
  expect_error_at(group_of(1, "peer_timeout_ms = 1e300\nmcast_root_delay_us = 1e305\n"), "peer_timeout_ms",
                  "out of range");
}

// The same bounds where a GroupSpec made in code is joined (Group::memory_bytes
// checks it as Engine::join does, without starting anything).
TEST(GroupFile, JoiningRefusesTimeoutsOutOfRangeByName) {
  GroupSpec spec = parse(group_of(2));
  EXPECT_NO_THROW(Group::memory_bytes(spec, 0));
  for (const double bad : {1e30, 0.5, 3'600'001.0, std::numeric_limits<double>::infinity(),
                           std::numeric_limits<double>::quiet_NaN()}) {
    for (const bool peer : {true, false}) {
      GroupSpec s = spec;
      (peer ? s.peer_timeout_ms : s.bootstrap_timeout_ms) = bad;
      const std::string name = peer ? "peer_timeout_ms" : "bootstrap_timeout_ms";
      try {
        Group::memory_bytes(s, 0);
        ADD_FAILURE() << name << " = " << bad << " accepted";
      } catch (const std::invalid_argument& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find(name + " is "), std::string::npos) << m;
        EXPECT_NE(m.find("allowed 1 .. 3600000 ms (1 ms to 1 hour)"), std::string::npos) << m;
      }
    }
  }
}

TEST(GroupFile, MaxMessageSizes) {
  EXPECT_EQ(parse(group_of(1, "max_message = \"8K\"\n")).max_message_bytes, 8u << 10);
  EXPECT_EQ(parse(group_of(1, "max_message = \"16M\"\n")).max_message_bytes, 16u << 20);
  EXPECT_EQ(parse(group_of(1, "max_message = \"1G\"\n")).max_message_bytes, 1u << 30);
  EXPECT_EQ(parse(group_of(1, "max_message = \"4G\"\n")).max_message_bytes, uint64_t{4} << 30);
  EXPECT_EQ(parse(group_of(1, "max_message = \"1000\"\n")).max_message_bytes, 1000u);
  EXPECT_EQ(parse(group_of(1, "max_message = 1\n")).max_message_bytes, 1u);
  EXPECT_EQ(parse(group_of(1, "max_message = 4294967296\n")).max_message_bytes, uint64_t{4} << 30);
  expect_error_at(group_of(1, "max_message = 0\n"), "max_message", "out of range");
  expect_error_at(group_of(1, "max_message = -8\n"), "max_message", "out of range");
  expect_error_at(group_of(1, "max_message = 4294967297\n"), "max_message", "out of range");
  expect_error_at(group_of(1, "max_message = \"5G\"\n"), "max_message", "out of range");
  expect_error_at(group_of(1, "max_message = \"0M\"\n"), "max_message", "out of range");
  expect_error_at(group_of(1, "max_message = \"99999999999999999999999G\"\n"), "max_message", "out of range");
  expect_error_at(group_of(1, "max_message = \"16Q\"\n"), "max_message", "malformed");
  expect_error_at(group_of(1, "max_message = \"M\"\n"), "max_message", "malformed");
  expect_error_at(group_of(1, "max_message = \"16 M\"\n"), "max_message", "malformed");
  expect_error_at(group_of(1, "max_message = \"\"\n"), "max_message", "\"8M\"");  // says what is allowed
}

// The algorithm is checked where it is written (found by group_file_fuzz:
// any name parsed, and Engine::join refused it without file or line).
TEST(GroupFile, AlgoIsAutoOrARegisteredAlgorithm) {
  expect_error_at(group_of(1, "algo = \"quicksort\"\n"), "algo", "group.algo \"quicksort\" is not an algorithm; allowed: auto | linear");
  expect_error_at(group_of(1, "algo = \"\"\n"), "algo", "is not an algorithm");
  EXPECT_EQ(parse(group_of(1, "algo = \"auto\"\n")).algo, "auto");
  EXPECT_EQ(parse(group_of(1, "algo = \"mcast_chain\"\n")).algo, "mcast_chain");
}

TEST(GroupFile, BootstrapIsOneOfThree) {
  const std::string member = "[[member]]\nrank = 0\nlanes = [\"a\"]\n";
  expect_error_at("[group]\nname = \"g\"\nbootstrap = \"mpi\"\n" + member, "mpi", "static | discovery | pmix");
  expect_error_at("[group]\nname = \"g\"\nbootstrap = \"Static\"\n" + member, "Static", "not a bootstrap");
  EXPECT_EQ(parse("[group]\nname = \"g\"\nbootstrap = \"pmix\"\n" + member).bootstrap, "pmix");
}

TEST(GroupFile, MissingRequiredKeys) {
  expect_error("[[member]]\nrank = 0\nlanes = [\"x\"]\n", 1, "missing [group]");
  expect_error_at("\n[group]\nid = 3\n[[member]]\nrank = 0\nlanes = [\"x\"]\n", "[group]", "lacks name");
  expect_error_at("[group]\nname = \"\"\n[[member]]\nrank = 0\nlanes = [\"x\"]\n", "name", "empty");
  expect_error_at("[group]\nname = \"g\"\nbootstrap = \"pmix\"\n\n[[member]]\nlanes = [\"x\"]\n", "[[member]]",
                  "lacks rank");
  expect_error_at("[group]\nname = \"g\"\nbootstrap = \"pmix\"\n\n[[member]]\nrank = 0\n", "[[member]]",
                  "lacks lanes");
}

TEST(GroupFile, RanksAreZeroToNMinusOneOnce) {
  const std::string twice = "[group]\nname = \"g\"\nbootstrap = \"pmix\"\n"
                            "[[member]]\nrank = 0\nlanes = [\"a\"]\n"
                            "[[member]]\nrank = 2\nlanes = [\"b\"]\n"
                            "[[member]]\nrank = 2 # again\nlanes = [\"c\"]\n";
  expect_error_at(twice, "again", "duplicated (also on line " + std::to_string(line_of(twice, "rank = 2")) + ")");
  expect_error_at(twice, "again", "rank 1 is missing");

  const std::string beyond = "[group]\nname = \"g\"\nbootstrap = \"pmix\"\n"
                             "[[member]]\nrank = 1\nlanes = [\"a\"]\n"
                             "[[member]]\nrank = 2\nlanes = [\"b\"]\n";
  expect_error_at(beyond, "rank = 2", "out of range");
  expect_error_at(beyond, "rank = 2", "rank 0 is missing");

  const std::string negative = "[group]\nname = \"g\"\nbootstrap = \"pmix\"\n[[member]]\nrank = -1\nlanes = [\"a\"]\n";
  expect_error_at(negative, "rank = -1", "out of range");
}

TEST(GroupFile, MemberCount) {
  expect_error("[group]\nname = \"g\"\nbootstrap = \"pmix\"\n", 1, "no [[member]]");
  expect_error_at("member = []\n[group]\nname = \"g\"\nbootstrap = \"pmix\"\n", "member", "no members");
  EXPECT_EQ(parse(group_of(1024)).members.size(), 1024u);
  const std::string too_many = group_of(1025);
  expect_error(too_many, line_of(too_many, "rank = 1024") - 1, "too many members");  // its [[member]]
}

TEST(GroupFile, MemberLanesMatchGroupLanes) {
  const std::string text = group_of(2, "lanes = 2\n");
  expect_error(text, line_of(text, "rank = 0") + 1, "has 1 entry but the group has 2 lanes");  // lanes =
  expect_error_at("[group]\nname = \"g\"\nbootstrap = \"pmix\"\n[[member]]\nrank = 0\nlanes = [\"\"]\n", "lanes",
                  "empty");
}

TEST(GroupFile, MacsAreUnicastHexAddresses) {
  expect_error_at(group_of(1, "", "macs = [\"02:00:00:00:00\"]\n"), "macs", "malformed");
  expect_error_at(group_of(1, "", "macs = [\"02-00-00-00-00-01\"]\n"), "macs", "malformed");
  expect_error_at(group_of(1, "", "macs = [\"02:00:00:00:00:0g\"]\n"), "macs", "malformed");
  expect_error_at(group_of(1, "", "macs = [\"02:00:00:00:00:001\"]\n"), "macs", "xx:xx:xx:xx:xx:xx");
  expect_error_at(group_of(1, "", "macs = [\"01:00:5e:00:00:01\"]\n"), "macs", "unicast");
  expect_error_at(group_of(1, "", "macs = [\"ff:ff:ff:ff:ff:ff\"]\n"), "macs", "multicast");
  expect_error_at(group_of(1, "", "macs = [\"00:00:00:00:00:00\"]\n"), "macs", "all zeros");
  expect_error_at(group_of(1, "", "macs = [1]\n"), "macs", "must be a string");
  expect_error_at(group_of(1, "", "macs = [\"02:00:00:00:00:01\", \"02:00:00:00:00:02\"]\n"), "macs",
                  "one address per lane");
  const std::string same = group_of(2, "", "macs = [\"02:00:00:00:00:01\"]\n");
  expect_error(same, line_of(same, "rank = 1") + 2, "duplicated");
  const std::string two_lanes = "[group]\nname = \"g\"\nlanes = 2\nbootstrap = \"discovery\"\n[[member]]\nrank = 0\n"
                                "lanes = [\"a\", \"b\"]\nmacs = [\"02:00:00:00:00:01\", \"02:00:00:00:00:09\"]\n";
  expect_error_at(two_lanes, "macs", "a member's lanes share one address");
  EXPECT_EQ(parse(group_of(1, "", "macs = [\"0a:1B:2c:3D:4e:5F\"]\n")).members[0].macs[0], "0a:1B:2c:3D:4e:5F");
  EXPECT_TRUE(parse(group_of(1, "", "macs = []\n")).members[0].macs.empty());
}

TEST(GroupFile, StaticBootstrapNeedsMacsAndEpoch) {
  const std::string head = "[group]\nname = \"g\"\nepoch = 1\n";
  const std::string one = "[[member]]\nrank = 0\nlanes = [\"a\"]\nmacs = [\"02:00:00:00:00:01\"]\n";
  EXPECT_EQ(parse(head + one).members[0].macs.size(), 1u);
  const std::string no_macs = head + one + "[[member]] # here\nrank = 1\nlanes = [\"b\"]\n";
  expect_error_at(no_macs, "# here", "static");
  expect_error_at(no_macs, "# here", "needs member.macs");
  expect_error_at("[group]\nname = \"g\"\n" + one, "[group]", "nonzero group.epoch");
  expect_error_at("[group]\nname = \"g\"\nepoch = 0\n" + one, "epoch", "nonzero group.epoch");
  // Discovery picks the epoch and learns the addresses.
  EXPECT_EQ(parse("[group]\nname = \"g\"\nbootstrap = \"discovery\"\n[[member]]\nrank = 0\nlanes = [\"a\"]\n").epoch,
            0u);
}

TEST(GroupFile, VerbsLanesNameOneAdapterPortFormedByPmixOrDiscovery) {
  const std::string head = "[group]\nname = \"g\"\nbootstrap = \"pmix\"\nlanes = 2\n";
  auto member = [](int rank, const std::string& lanes) {
    return "[[member]]\nrank = " + std::to_string(rank) + "\nlanes = [" + lanes + "]\n";
  };
  const std::string good = head + member(0, "\"verbs:mlx5_0:1\", \"verbs:mlx5_0:1\"") +
                           member(1, "\"verbs:mlx5_1:2\", \"verbs:mlx5_1:2\"");
  EXPECT_EQ(parse(good).members[1].lanes[0], "verbs:mlx5_1:2");
  // Malformed verbs lanes are refused at their line, saying the form.
  for (const char* bad : {"verbs:", "verbs::1", "verbs:mlx5_0:0", "verbs:mlx5_0:256", "verbs:mlx5_0:x",
                          "verbs:ml x5:1", "verbs:mlx5_0:1:2"})
    expect_error_at(head + member(0, "\"" + std::string(bad) + "\", \"verbs:mlx5_0:1\""), "lanes = [",
                    "verbs:DEVICE:PORT");
  // One adapter port per member; verbs and DPDK not mixed.
  expect_error_at(head + member(0, "\"verbs:mlx5_0:1\", \"verbs:mlx5_0:2\""), "lanes = [", "two adapter ports");
  expect_error_at(head + member(0, "\"verbs:mlx5_0:1\", \"net_af_packet0,iface=v0\""), "lanes = [",
                  "not both");
  const std::string mixed = head + member(0, "\"verbs:mlx5_0:1\", \"verbs:mlx5_0:1\"") +
                            member(1, "\"net_af_packet0,iface=v0\", \"net_af_packet1,iface=v1\"");
  expect_error_at(mixed, "[[member]]", "all or none");
  // Queue pair numbers exist only once the port is open: pmix or discovery, not static.
  const std::string static_group =
      "[group]\nname = \"g\"\nepoch = 1\n" + member(0, "\"verbs:mlx5_0\"") + "macs = [\"02:00:00:00:00:01\"]\n";
  expect_error_at(static_group, "[[member]]", "not \"static\"");
  EXPECT_EQ(parse("[group]\nname = \"g\"\nbootstrap = \"discovery\"\n" + member(0, "\"verbs:mlx5_0:2\"")).members.size(),
            1u);
  EXPECT_EQ(parse("[group]\nname = \"g\"\nbootstrap = \"pmix\"\n" + member(0, "\"verbs:mlx5_0\"")).members[0].lanes[0],
            "verbs:mlx5_0");  // the port defaults to 1
}

TEST(GroupFile, SiteLatencyIsASquareOfDistances) {
  expect_error_at(group_of(1, "site_latency_us = [[0, 1], [1]]\n"), "site_latency_us", "not square");
  expect_error_at(group_of(1, "site_latency_us = [[0, 1, 2], [1, 0, 2]]\n"), "site_latency_us", "not square");
  expect_error_at(group_of(1, "site_latency_us = [\n  [0, 5],\n  [-5, 0], # neg\n]\n"), "# neg", "negative");
  expect_error_at(group_of(1, "site_latency_us = [[0, 5], [5, 1]]\n"), "site_latency_us", "diagonal");
  expect_error_at(group_of(1, "site_latency_us = [[0, inf], [5, 0]]\n"), "site_latency_us", "non-finite");
  EXPECT_TRUE(parse(group_of(1, "site_latency_us = []\n")).site_latency_us.empty());
}

TEST(GroupFile, SitesIndexSiteLatency) {
  const std::string far = group_of(1, "site_latency_us = [[0, 5], [5, 0]]\n", "site = 2\n");
  expect_error_at(far, "site = 2", "out of range of site_latency_us");
  expect_error_at(far, "site = 2", "0..1");
  EXPECT_EQ(parse(group_of(1, "site_latency_us = [[0, 5], [5, 0]]\n", "site = 1\n")).members[0].site, 1u);
  // Without latencies, sites only group members.
  EXPECT_EQ(parse(group_of(1, "", "site = 7\n")).members[0].site, 7u);
}

TEST(GroupFile, SitesSwitches) {
  const std::string lat = "site_latency_us = [[0, 2000], [2000, 0]]\n";
  EXPECT_TRUE(parse(group_of(2, lat)).use_sites);
  EXPECT_FALSE(parse(group_of(2, lat)).emulate_latency);
  const GroupSpec g = parse(group_of(2, lat + "use_sites = false\nemulate_latency = true\n"));
  EXPECT_FALSE(g.use_sites);
  EXPECT_TRUE(g.emulate_latency);
  expect_error_at(group_of(2, lat + "use_sites = 1\n"), "use_sites", "true or false");
  expect_error_at(group_of(2, "emulate_latency = true\n"), "emulate_latency", "no group.site_latency_us");
}

// The shape every member computes alike from the group file: sites per rank,
// and a hypercube order whose subcubes of four are each one site.
// Streams each member may publish: every member keeps a slot for each, so
// the group cannot run out of them; the old fixed count of slots is named.
TEST(GroupFile, StreamsPerMember) {
  EXPECT_EQ(parse(group_of(2)).streams.streams_per_member, 1u);
  EXPECT_EQ(parse(group_of(2, "streams_per_member = 16\n")).streams.streams_per_member, 16u);
  expect_error_at(group_of(2, "streams_per_member = 0\n"), "streams_per_member", "1..16");
  expect_error_at(group_of(2, "streams_per_member = 17\n"), "streams_per_member", "out of range");
  expect_error_at(group_of(2, "max_streams = 4\n"), "max_streams", "streams_per_member");
}

TEST(GroupShape, FromTheSitesOfTheGroupFile) {
  const GroupSpec sites = load_group_file(kExamples + "two_sites.toml");
  const engine::GroupShapeData shape = engine::shape_of(sites);
  ASSERT_EQ(shape.site_of_rank.size(), 8u);
  for (uint32_t r = 0; r < 8; ++r) EXPECT_EQ(shape.site_of_rank[r], sites.members[r].site);
  ASSERT_EQ(shape.hypercube_order.size(), 8u);
  for (uint32_t pos = 0; pos < 8; ++pos)
    EXPECT_EQ(sites.members[shape.hypercube_order[pos]].site, sites.members[shape.hypercube_order[pos & 4]].site)
        << "position " << pos << " is not in its subcube's site";

  GroupSpec blind = sites;
  blind.use_sites = false;
  EXPECT_TRUE(engine::shape_of(blind).hypercube_order.empty());
  EXPECT_TRUE(engine::shape_of(blind).site_of_rank.empty());
  GroupSpec one_site = sites;
  for (auto& m : one_site.members) m.site = 0;
  EXPECT_TRUE(engine::shape_of(one_site).site_of_rank.empty());

  const std::vector<uint64_t> to0 = engine::latency_to_ns(sites, 0);
  for (uint32_t r = 0; r < 8; ++r) EXPECT_EQ(to0[r], sites.members[r].site == 0 ? 0u : 2'000'000u);
}

}  // namespace
}  // namespace lanecast
