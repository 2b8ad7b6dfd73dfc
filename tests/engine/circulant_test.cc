// Träff's circulant broadcast (algos/circulant.h) run by the engine on the
// in-process fabric: every group of 2..64 members, every member as the root,
// a message of several phases of segments with a short last one - every
// member's bytes equal to the root's and delivered exactly once. Then the
// same under 3% loss on every link, where the reliable channels repair what
// the schedule cannot.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "algos/topology/circulant.h"
#include "engine/api/member_internals.h"
#include "lanecast/lanecast.h"
#include "tests/engine/group_env.h"

namespace lanecast {
namespace {

using test::broadcast_all;
using test::engine;
using test::fill;
using test::test_seed;

constexpr uint32_t kSegment = 256;

// A broadcast from every root of a group of p; the bytes delivered must be
// the message once per member but the root, per broadcast.
void every_root(uint32_t p, double loss, std::mt19937_64& rng) {
  GroupOptions o;
  o.nodes = p;
  o.algo = "circulant";
  o.segment_bytes = kSegment;
  o.max_message_bytes = 64 * kSegment;
  o.fabric.seed = rng();
  o.fabric.loss = loss;
  auto g = engine().create_local_group(o);
  // Three phases and a bit, the last segment short: repeats of the last
  // segment in the final rounds are left out, the rest arrives once.
  const uint32_t q = algos::topology::circulant_phase(p);
  const uint64_t size = uint64_t{3 * q + 2} * kSegment - 5;
  for (Rank root = 0; root < p; ++root) {
    SCOPED_TRACE("p " + std::to_string(p) + " root " + std::to_string(root));
    std::vector<std::vector<std::byte>> bufs(p, std::vector<std::byte>(size, std::byte{0x5A}));
    fill(bufs[root], rng);
    ASSERT_EQ(broadcast_all(*g, root, bufs), "");
    for (Rank r = 0; r < p; ++r) ASSERT_TRUE(bufs[r] == bufs[root]) << "rank " << r;
  }
  uint64_t delivered = 0, resent = 0;
  for (Rank r = 0; r < p; ++r) {
    delivered += node_counters(g->member(r)).delivered_bytes.get();
    resent += node_counters(g->member(r)).tx_retransmits.get();
  }
  EXPECT_EQ(delivered, size * p * (p - 1)) << "p " << p;
  if (loss > 0) {
    EXPECT_GT(resent, 0u) << "p " << p << ": the loss never reached a frame";
  }
}

TEST(Circulant, EveryGroupOf2To64EveryRoot) {
  const uint64_t seed = test_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (LANECAST_SEED replays)");
  std::mt19937_64 rng(seed);
  for (uint32_t p = 2; p <= 64; ++p) {
    every_root(p, 0, rng);
    if (HasFatalFailure()) return;
  }
}

TEST(Circulant, ThreePercentLossOnEveryLink) {
  const uint64_t seed = test_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (LANECAST_SEED replays)");
  std::mt19937_64 rng(seed + 1);
  for (uint32_t p : {5u, 17u, 33u}) {
    every_root(p, 0.03, rng);
    if (HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace lanecast
