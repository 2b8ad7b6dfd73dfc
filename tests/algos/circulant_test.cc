// The circulant machine (algos/circulant.h) run by the model executor: every
// rank receives every segment exactly once - no repeat of the last segment
// reaches a rank that has it - for every group of 2..70 and every root, in
// random, FIFO and LIFO orders; and its sends follow the circulant graph.
#include <gtest/gtest.h>

#include <string>

#include "algos/model/model.h"
#include "algos/registry.h"
#include "algos/topology/circulant.h"
#include "tests/algos/plans.h"
#include "tests/algos/recording.h"

namespace lanecast::algos {
namespace {

using plans::plan_of;

TEST(Circulant, EverySegmentOnceEveryGroupEveryRoot) {
  for (uint32_t p = 2; p <= 70; ++p) {
    const uint32_t q = topology::circulant_phase(p);
    for (Rank root = 0; root < p; ++root)
      for (uint64_t segments : {uint64_t{1}, uint64_t{q}, uint64_t{q + 1}, uint64_t{3 * q + 2}}) {
        const Plan plan = plan_of(p, root, segments * 100 - 7, 100);
        for (model::Order order : {model::Order::Random, model::Order::Fifo, model::Order::Lifo}) {
          model::Options opt;
          opt.seed = 1 + root + p * 131;
          opt.order = order;
          const model::Result r = model::run(Algo::Circulant, plan, opt);
          ASSERT_TRUE(r.ok) << "p " << p << " root " << root << " segments " << segments << ": " << r.error;
          ASSERT_EQ(r.sends, segments * (p - 1)) << "p " << p << " root " << root << " segments " << segments;
          for (Rank k = 0; k < p; ++k) ASSERT_EQ(r.nodes[k].duplicates_received, 0u) << "rank " << k;
        }
      }
  }
}

TEST(Circulant, EmptyAndSingleRankGroups) {
  for (uint32_t p : {1u, 2u, 5u}) {
    const model::Result empty = model::run(Algo::Circulant, plan_of(p, p - 1, 0, 100));
    EXPECT_TRUE(empty.ok) << empty.error;
    EXPECT_EQ(empty.sends, 0u);
  }
  const model::Result one = model::run(Algo::Circulant, plan_of(1, 0, 1000, 100));
  EXPECT_TRUE(one.ok) << one.error;
  EXPECT_EQ(one.sends, 0u);
}

// Rank r sends only to r + skip[k] (virtual ranks): the q out-edges of the
// circulant graph, nothing else.
TEST(Circulant, SendsFollowTheGraph) {
  const uint32_t p = 13;
  const Rank root = 4;
  const Plan plan = plan_of(p, root, 40 * 64, 64);
  const auto s = topology::circulant_skips(p);
  for (Rank me = 0; me < p; ++me) {
    testing::Recorder rec;
    auto m = make_machine(Algo::Circulant, plan, me);
    m->start(rec);
    if (me != root) {
      EXPECT_TRUE(rec.acts.empty()) << "rank " << me << " sends before it holds anything";
      for (SegmentIndex seg = 0; seg < plan.segments(); ++seg) m->on_segment(seg, root, 0, rec);
    } else {
      // The rounds start where the last phase ends on the last segment: the
      // root's first q sends are segments 0..q-1, one to each out-edge.
      const topology::CirculantRounds rounds(s.q, plan.segments());
      for (uint32_t j = 0; j < s.q; ++j)
        EXPECT_EQ(rec.acts[j], testing::send(plan.to_real(s.skip[rounds.k(rounds.first + j)]), j)) << "send " << j;
    }
    EXPECT_TRUE(m->done());
    const Rank v = plan.to_virtual(me);
    uint64_t delivered = 0;
    for (const testing::Act& a : rec.acts) {
      if (a.kind == testing::Act::Deliver) {
        ++delivered;
        continue;
      }
      ASSERT_EQ(a.kind, testing::Act::Send) << a;
      const Rank to = plan.to_virtual(a.to);
      bool edge = false;
      for (uint32_t k = 0; k < s.q; ++k) edge |= to == (v + s.skip[k]) % p;
      EXPECT_TRUE(edge) << "rank " << me << ": " << a;
      EXPECT_NE(a.to, root) << "rank " << me;
    }
    EXPECT_EQ(delivered, me == root ? 0 : plan.segments()) << "rank " << me;
  }
}

}  // namespace
}  // namespace lanecast::algos
