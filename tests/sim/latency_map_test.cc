// The latency map's text format (topology files) and the duration parser.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <set>

#include "algos/sim/latency_map.h"

namespace lanecast::algos::sim {
namespace {

constexpr Picos kUs = kPicosPerMicro;

TEST(LatencyMap, Durations) {
  EXPECT_EQ(parse_duration("50us", "t"), 50 * kUs);
  EXPECT_EQ(parse_duration("12", "t"), 12 * kUs);
  EXPECT_EQ(parse_duration("1.5ms", "t"), 1500 * kUs);
  EXPECT_EQ(parse_duration("800ns", "t"), 800'000u);
  EXPECT_EQ(parse_duration("2s", "t"), 2'000'000 * kUs);
  for (const char* bad : {"", "x", "5 us", "-3us", "4parsecs", "nan"})
    EXPECT_THROW(parse_duration(bad, "t"), std::invalid_argument) << bad;
}

TEST(LatencyMap, SitesPairsAndDefault) {
  const LatencyMap t = LatencyMap::parse(
      "# two islands\n"
      "nodes 6\n"
      "default 20us\n"
      "site east 0-2\n"
      "site west 3,4   # rank 5 is in no site\n"
      "latency east east 5us\n"
      "latency east west 1.5ms\n"
      "pair 1 4 3ms\n",
      kUs);
  EXPECT_EQ(t.nodes(), 6u);
  EXPECT_EQ(t.latency(0, 2), 5 * kUs);
  EXPECT_EQ(t.latency(3, 4), 20 * kUs);  // west west unset: default
  EXPECT_EQ(t.latency(0, 3), 1500 * kUs);
  EXPECT_EQ(t.latency(4, 0), 1500 * kUs);
  EXPECT_EQ(t.latency(1, 4), 3000 * kUs);
  EXPECT_EQ(t.latency(4, 1), 3000 * kUs);
  EXPECT_EQ(t.latency(5, 0), 20 * kUs);
  EXPECT_EQ(t.site_of(4), 1);
  EXPECT_EQ(t.site_of(5), -1);
  EXPECT_NO_THROW(t.check_fits(6));
  EXPECT_THROW(t.check_fits(7), std::invalid_argument);
}

TEST(LatencyMap, Matrix) {
  const LatencyMap t = LatencyMap::parse("nodes 3\nmatrix\n0 1 2\n\n3 0 4ms\n5 6 0\n", 7 * kUs);
  EXPECT_EQ(t.latency(0, 2), 2 * kUs);
  EXPECT_EQ(t.latency(1, 2), 4000 * kUs);
  EXPECT_EQ(t.latency(2, 0), 5 * kUs);
}

TEST(LatencyMap, ErrorsNameTheLine) {
  auto message = [](const char* text) {
    try {
      LatencyMap::parse(text, 0);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message("nodes 4\nbogus 1\n").rfind("topology:2:", 0), 0u) << message("nodes 4\nbogus 1\n");
  EXPECT_NE(message("site a 0-1\nlatency a b 1us\n").find("unknown site 'b'"), std::string::npos);
  EXPECT_NE(message("nodes 2\nmatrix\n0 1\n").find("ends early"), std::string::npos);
  EXPECT_NE(message("nodes 2\nsite a 0-5\n").find("outside"), std::string::npos);
  EXPECT_NE(message("site a 0-1\nsite b 1\n").find("two sites"), std::string::npos);
  EXPECT_NE(message("matrix\n").find("needs a 'nodes'"), std::string::npos);
  EXPECT_NE(message("site a 3-1\n").find("bad rank list"), std::string::npos);
}

TEST(LatencyMap, RandomIslandsUseEveryIsland) {
  const LatencyMap t = LatencyMap::random_islands(16, 4, 10 * kUs, 1500 * kUs, 6000 * kUs, 42);
  std::set<int> seen;
  for (Rank r = 0; r < 16; ++r) seen.insert(t.site_of(r));
  EXPECT_EQ(seen.size(), 4u);
  for (Rank a = 0; a < 16; ++a)
    for (Rank b = 0; b < 16; ++b) {
      if (a == b) continue;
      const Picos l = t.latency(a, b);
      EXPECT_EQ(l, t.latency(b, a));
      if (t.site_of(a) == t.site_of(b)) {
        EXPECT_EQ(l, 10 * kUs);
      } else {
        EXPECT_TRUE(l >= 1500 * kUs && l <= 6000 * kUs);
      }
    }
}

// Largest over smallest latency of every ordered pair, the slow way.
double spread_by_hand(const LatencyMap& t, uint32_t nodes) {
  Picos lo = UINT64_MAX, hi = 0;
  for (Rank a = 0; a < nodes; ++a)
    for (Rank b = 0; b < nodes; ++b)
      if (a != b) {
        lo = std::min(lo, t.latency(a, b));
        hi = std::max(hi, t.latency(a, b));
      }
  return double(hi) / double(lo);
}

TEST(LatencyMap, SpreadIsLargestOverSmallestLatency) {
  EXPECT_EQ(LatencyMap(10 * kUs).spread(1 << 20), 1.0);  // uniform, at once for any size
  EXPECT_EQ(LatencyMap(0).spread(64), 1.0);               // uniform at zero is still uniform
  const LatencyMap two = LatencyMap::parse("nodes 4\nsite a 0-1\nsite b 2-3\nlatency a a 50us\n"
                                       "latency b b 100us\nlatency a b 1.5ms\n", kUs);
  EXPECT_EQ(two.spread(4), 30.0);
  EXPECT_THROW(two.spread(5), std::invalid_argument);  // written for 4
  // Only the group's ranks count; ranks in no site have the default to everyone.
  const LatencyMap open = LatencyMap::parse("default 20us\nsite a 0-1\nlatency a a 5us\n", kUs);
  EXPECT_EQ(open.spread(2), 1.0);
  EXPECT_EQ(open.spread(3), 4.0);
  EXPECT_EQ(open.spread(50), spread_by_hand(open, 50));
  EXPECT_EQ(open.spread(1 << 20), 4.0);
  // A pair override counts from the group that holds both its ranks; a matrix
  // counts both directions.
  const LatencyMap pair = LatencyMap::parse("pair 1 4 3ms\n", 10 * kUs);
  EXPECT_EQ(pair.spread(1), 1.0);  // no pair at all
  EXPECT_EQ(pair.spread(4), 1.0);
  EXPECT_EQ(pair.spread(5), 300.0);
  EXPECT_EQ(pair.spread(40), spread_by_hand(pair, 40));
  EXPECT_EQ(LatencyMap::parse("nodes 3\nmatrix\n0 1 2\n3 0 4\n5 6 0\n", kUs).spread(3), 6.0);
  // Some pairs at 0, others not: no finite ratio.
  EXPECT_EQ(LatencyMap::parse("site a 0-1\nlatency a a 0us\n", 10 * kUs).spread(3),
            std::numeric_limits<double>::infinity());
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    const LatencyMap t = LatencyMap::random_islands(16, 3, 50 * kUs, 1500 * kUs, 6000 * kUs, seed);
    EXPECT_EQ(t.spread(16), spread_by_hand(t, 16)) << "seed " << seed;
  }
}

}  // namespace
}  // namespace lanecast::algos::sim

namespace lanecast::algos::sim {
namespace {

TEST(LatencyMap, ShippedExamplesParse) {
  for (const char* name : {"two_sites", "islands4", "grid3", "matrix4"}) {
    const std::string path = std::string(LANECAST_SOURCE_DIR) + "/config/topologies/" + name + ".topo";
    const LatencyMap t = LatencyMap::load(path, 10 * kPicosPerMicro);
    EXPECT_GT(t.nodes(), 0u) << name;
    EXPECT_FALSE(t.uniform()) << name;
  }
}

}  // namespace
}  // namespace lanecast::algos::sim
