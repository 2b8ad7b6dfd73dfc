// Hand-driven machines: explicit events, labelled past (a segment already
// held), in-order and future (ahead of a gap), with assertions on the emitted
// actions.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <vector>

#include "algos/registry.h"
#include "tests/algos/recording.h"

namespace lanecast::algos::testing {
namespace {

using Acts = std::vector<Act>;

Plan make_plan(uint32_t p, Rank root, uint32_t segments, uint32_t s = 8) {
  PlanParams pp;
  pp.nodes = p;
  pp.root = root;
  pp.segment_bytes = s;
  pp.message_bytes = uint64_t{segments} * s;
  return Plan(pp);
}

// Every algorithm: an empty message is done right after start with no action,
// on every rank; a group of one is done at once.
TEST(AllMachines, EmptyMessageAndSingleNode) {
  for (const AlgoInfo& a : algorithms()) {
    SCOPED_TRACE(std::string(a.name));
    for (uint32_t p : {1u, 2u, 5u}) {
      const Plan plan = make_plan(p, p - 1, 0);
      for (Rank r = 0; r < p; ++r) {
        auto m = make_machine(a.id, plan, r);
        Recorder out;
        m->start(out);
        EXPECT_TRUE(out.acts.empty()) << "rank " << r;
        EXPECT_TRUE(m->done()) << "rank " << r;
      }
    }
    const Plan one = make_plan(1, 0, 3);
    auto m = make_machine(a.id, one, 0);
    Recorder out;
    m->start(out);
    EXPECT_TRUE(out.acts.empty());
    EXPECT_TRUE(m->done());
  }
}

TEST(Linear, RootSendsSegmentMajor) {
  const Plan plan = make_plan(3, 1, 2);
  auto m = make_machine(Algo::Linear, plan, 1);
  Recorder out;
  EXPECT_FALSE(m->done());
  m->start(out);
  EXPECT_EQ(out.take(), (Acts{send(0, 0), send(2, 0), send(0, 1), send(2, 1)}));
  EXPECT_TRUE(m->done());
}

TEST(Linear, ReceiverFutureInOrderPast) {
  const Plan plan = make_plan(3, 0, 3);
  auto m = make_machine(Algo::Linear, plan, 2);
  Recorder out;
  m->start(out);
  EXPECT_TRUE(out.take().empty());
  m->on_segment(2, 0, 0, out);  // future
  EXPECT_EQ(out.take(), Acts{deliver(2)});
  m->on_segment(0, 0, 0, out);  // in order
  EXPECT_EQ(out.take(), Acts{deliver(0)});
  EXPECT_FALSE(m->done());
  m->on_segment(0, 0, 0, out);  // past: a copy it holds
  EXPECT_TRUE(out.take().empty());
  m->on_segment(1, 0, 0, out);
  EXPECT_EQ(out.take(), Acts{deliver(1)});
  EXPECT_TRUE(m->done());
}

// p = 8, root 0: children 4, 2, 1 (largest subtree first), the whole message each.
TEST(Binomial, RootServesLargestSubtreeFirst) {
  const Plan plan = make_plan(8, 0, 2);
  auto m = make_machine(Algo::Binomial, plan, 0);
  Recorder out;
  m->start(out);
  EXPECT_EQ(out.take(),
            (Acts{send(4, 0), send(4, 1), send(2, 0), send(2, 1), send(1, 0), send(1, 1)}));
  EXPECT_TRUE(m->done());
}

// Store and forward: nothing goes on before the last segment is held.
TEST(Binomial, ForwardsOnlyTheWholeMessage) {
  const Plan plan = make_plan(8, 0, 3);
  auto m = make_machine(Algo::Binomial, plan, 4);  // children 6, 5
  Recorder out;
  m->start(out);
  EXPECT_TRUE(out.take().empty());
  m->on_segment(2, 0, 0, out);  // future
  EXPECT_EQ(out.take(), Acts{deliver(2)});
  m->on_segment(0, 0, 0, out);  // in order
  EXPECT_EQ(out.take(), Acts{deliver(0)});
  m->on_segment(0, 0, 0, out);  // past
  EXPECT_TRUE(out.take().empty());
  EXPECT_FALSE(m->done());
  m->on_segment(1, 0, 0, out);  // the last one
  EXPECT_EQ(out.take(), (Acts{deliver(1), send(6, 0), send(6, 1), send(6, 2), send(5, 0),
                              send(5, 1), send(5, 2)}));
  EXPECT_TRUE(m->done());
}

// Root 5 of 8: virtual rank v is real (v + 5) % 8.
TEST(Binomial, RotatedRoot) {
  const Plan plan = make_plan(8, 5, 1);
  auto root = make_machine(Algo::Binomial, plan, 5);
  Recorder out;
  root->start(out);
  EXPECT_EQ(out.take(), (Acts{send(1, 0), send(7, 0), send(6, 0)}));
  auto v6 = make_machine(Algo::Binomial, plan, 3);  // virtual 6: child virtual 7 = real 4
  v6->start(out);
  v6->on_segment(0, 1, 0, out);
  EXPECT_EQ(out.take(), (Acts{deliver(0), send(4, 0)}));
  auto leaf = make_machine(Algo::Binomial, plan, 4);
  leaf->start(out);
  leaf->on_segment(0, 3, 0, out);
  EXPECT_EQ(out.take(), Acts{deliver(0)});
  EXPECT_TRUE(leaf->done());
}

TEST(Chain, RootStreamsToItsSuccessor) {
  const Plan plan = make_plan(4, 3, 3);
  auto m = make_machine(Algo::Chain, plan, 3);
  Recorder out;
  m->start(out);
  EXPECT_EQ(out.take(), (Acts{send(0, 0), send(0, 1), send(0, 2)}));
  EXPECT_TRUE(m->done());
}

// Segments go on in whatever order they arrive.
TEST(Chain, ForwardsInArrivalOrder) {
  const Plan plan = make_plan(4, 3, 3);
  auto m = make_machine(Algo::Chain, plan, 1);  // virtual 2, successor virtual 3 = real 2
  Recorder out;
  m->start(out);
  EXPECT_TRUE(out.take().empty());
  m->on_segment(2, 0, 0, out);  // future
  EXPECT_EQ(out.take(), (Acts{deliver(2), send(2, 2)}));
  m->on_segment(0, 0, 0, out);  // in order
  EXPECT_EQ(out.take(), (Acts{deliver(0), send(2, 0)}));
  m->on_segment(2, 0, 0, out);  // past
  EXPECT_TRUE(out.take().empty());
  EXPECT_FALSE(m->done());
  m->on_segment(1, 0, 0, out);
  EXPECT_EQ(out.take(), (Acts{deliver(1), send(2, 1)}));
  EXPECT_TRUE(m->done());
}

TEST(Chain, TailOnlyDelivers) {
  const Plan plan = make_plan(4, 3, 2);
  auto m = make_machine(Algo::Chain, plan, 2);  // virtual 3: the tail
  Recorder out;
  m->start(out);
  m->on_segment(1, 1, 0, out);
  m->on_segment(0, 1, 0, out);
  EXPECT_EQ(out.take(), (Acts{deliver(1), deliver(0)}));
  EXPECT_TRUE(m->done());
}

TEST(Binary, RootFeedsBothChildrenSegmentMajor) {
  const Plan plan = make_plan(5, 2, 2);  // virtual v is real (v + 2) % 5
  auto m = make_machine(Algo::Binary, plan, 2);
  Recorder out;
  m->start(out);
  EXPECT_EQ(out.take(), (Acts{send(3, 0), send(4, 0), send(3, 1), send(4, 1)}));
  auto v1 = make_machine(Algo::Binary, plan, 3);  // virtual 1: children virtual 3, 4 = real 0, 1
  v1->start(out);
  v1->on_segment(1, 2, 0, out);  // future
  EXPECT_EQ(out.take(), (Acts{deliver(1), send(0, 1), send(1, 1)}));
}

// p = 8: tree 0 is the heap over 1..7 (1 -> 2, 3), tree 1 over 7..1 (7 -> 6, 5).
TEST(Bintree, RootAlternatesTrees) {
  const Plan plan = make_plan(8, 0, 4);
  auto m = make_machine(Algo::Bintree, plan, 0);
  Recorder out;
  m->start(out);
  EXPECT_EQ(out.take(), (Acts{send(1, 0), send(7, 1), send(1, 2), send(7, 3)}));
}

TEST(Bintree, InteriorOfOneTreeIsALeafOfTheOther) {
  const Plan plan = make_plan(8, 0, 4);
  auto m = make_machine(Algo::Bintree, plan, 1);
  Recorder out;
  m->start(out);
  m->on_segment(2, 0, 0, out);  // future, tree 0: to both children
  EXPECT_EQ(out.take(), (Acts{deliver(2), send(2, 2), send(3, 2)}));
  m->on_segment(1, 5, 0, out);  // tree 1: a leaf there, under 5
  EXPECT_EQ(out.take(), Acts{deliver(1)});
  m->on_segment(2, 0, 0, out);  // past
  EXPECT_TRUE(out.take().empty());
  EXPECT_FALSE(m->done());
}

// p = 4, 7 segments: pieces of receivers 1, 2, 3 are [0,2), [2,4), [4,7).
TEST(Symmetric, RootDealsPiecesRoundRobin) {
  const Plan plan = make_plan(4, 0, 7);
  auto m = make_machine(Algo::Symmetric, plan, 0);
  Recorder out;
  m->start(out);
  EXPECT_EQ(out.take(), (Acts{send(1, 0), send(2, 2), send(3, 4), send(1, 1), send(2, 3),
                              send(3, 5), send(3, 6)}));
  EXPECT_TRUE(m->done());
}

TEST(Symmetric, ReceiverForwardsOnlyItsOwnPiece) {
  const Plan plan = make_plan(4, 0, 7);
  auto m = make_machine(Algo::Symmetric, plan, 2);
  Recorder out;
  m->start(out);
  m->on_segment(3, 0, 0, out);  // own piece, future: to 2 + 2 = 1, then 2 + 4 = 3 (mod 3)
  EXPECT_EQ(out.take(), (Acts{deliver(3), send(1, 3), send(3, 3)}));
  m->on_segment(5, 3, 0, out);  // someone else's piece
  EXPECT_EQ(out.take(), Acts{deliver(5)});
  m->on_segment(3, 0, 0, out);  // past
  EXPECT_TRUE(out.take().empty());
}

// Symmetric's first round of forwards on a plan of k receivers: each holder
// of a segment forwards it, starting when the root's frame for it lands
// (frame time seg + 1; the root sends its frames in segment order) and
// sending its i-th copy in frame time seg + 1 + i. Checks that each holder
// sends to every other receiver once and returns the most senders that
// target one receiver in one frame time.
int most_senders_at_one_port(const Plan& plan) {
  const uint32_t k = plan.nodes() - 1, segs = plan.segments();
  std::map<uint32_t, std::map<Rank, int>> targets;  // frame time -> receiver -> senders
  for (Rank v = 1; v <= k; ++v) {
    // The first segment of v's piece (piece v - 1 of k), if it holds one.
    const auto first = static_cast<SegmentIndex>(uint64_t{v - 1} * segs / k);
    if (first == static_cast<SegmentIndex>(uint64_t{v} * segs / k)) continue;
    auto m = make_machine(Algo::Symmetric, plan, v);
    Recorder out;
    m->start(out);
    m->on_segment(first, 0, 0, out);
    std::set<Rank> seen;
    uint32_t i = 0;
    for (const Act& a : out.take()) {
      if (a.kind != Act::Send) continue;
      ++i;
      EXPECT_NE(a.to, v);
      EXPECT_NE(a.to, 0u);
      EXPECT_TRUE(seen.insert(a.to).second) << "k=" << k << " segs=" << segs << " v=" << v << " twice to " << a.to;
      ++targets[first + 1 + i][a.to];
    }
    EXPECT_EQ(seen.size(), k - 1) << "k=" << k << " segs=" << segs << " v=" << v;
  }
  int worst = 0;
  for (const auto& [t, by] : targets)
    for (const auto& [r, n] : by) worst = std::max(worst, n);
  return worst;
}

// The forwarding order is a schedule: receiver v gets its piece's j-th segment
// in frame time j k + v and sends its i-th copy in frame time j k + v + i. In
// any frame time no two receivers may target the same one (k odd), or at most
// two (k even: one skipped phantom slot); every receiver gets each copy once.
TEST(Symmetric, ForwardingOrderAvoidsIncast) {
  for (uint32_t k = 1; k <= 40; ++k)
    EXPECT_LE(most_senders_at_one_port(make_plan(k + 1, 0, k)), k % 2 == 1 ? 1 : 2) << "k=" << k;
}

// Fewer segments than receivers: the holders start one frame time apart
// (the root's frames in segment order) though their numbers are further
// apart. Counted from their own numbers their orders met (whole bursts at
// one port on 65 536 nodes); counted from their place among the holders, at
// most two senders meet at a port in a frame time, and every holder still
// sends to every other receiver once.
TEST(Symmetric, ForwardingOrderAvoidsIncastWithEmptyPieces) {
  int worst_of_all = 0;
  for (uint32_t k = 3; k <= 40; ++k)
    for (uint32_t segs = 2; segs < k; ++segs) {  // one segment: the root sends it to all
      const int worst = most_senders_at_one_port(make_plan(k + 1, 0, segs));
      EXPECT_LE(worst, 2) << "k=" << k << " segs=" << segs;
      worst_of_all = std::max(worst_of_all, worst);
    }
  EXPECT_EQ(worst_of_all, 2) << "a swapped slot meets another sender somewhere";
}

// p = 4, one segment per chunk. Scatter: 2 gets chunks 2, 3; 1 gets chunk 1.
// Recursive doubling: step 0 chunk 0 to 1, step 1 chunks 0, 1 to 2.
TEST(ScatterAllgather, RootScattersThenDoubles) {
  const Plan plan = make_plan(4, 0, 4);
  auto m = make_machine(Algo::ScatterAllgather, plan, 0);
  Recorder out;
  m->start(out);
  EXPECT_EQ(out.take(), (Acts{send(2, 2), send(2, 3), send(1, 1), send(1, 0), send(2, 0),
                              send(2, 1)}));
  EXPECT_TRUE(m->done());
}

// p = 3 (ring). Rank 1: scatter brings chunk 1, the ring from 0 brings chunk 0
// (and chunk 2 after it went 2 -> 0 -> 1); it passes on all but chunk 2.
TEST(ScatterAllgather, RingPassesOnAllButTheSuccessorsChunk) {
  const Plan plan = make_plan(3, 0, 3);
  auto m = make_machine(Algo::ScatterAllgather, plan, 1);
  Recorder out;
  m->start(out);
  m->on_segment(0, 0, 0, out);  // ring, chunk 0 (future: before my own chunk)
  EXPECT_EQ(out.take(), (Acts{send(2, 0), deliver(0)}));
  m->on_segment(1, 0, 0, out);  // scatter, my chunk: starts round the ring
  EXPECT_EQ(out.take(), (Acts{send(2, 1), deliver(1)}));
  EXPECT_FALSE(m->done());
  m->on_segment(2, 0, 0, out);  // ring, the successor's chunk: kept
  EXPECT_EQ(out.take(), Acts{deliver(2)});
  EXPECT_TRUE(m->done());
}

// The root takes part in the ring: it passes on what comes round from p-1.
TEST(ScatterAllgather, RootRelaysTheRing) {
  const Plan plan = make_plan(3, 0, 3);
  auto m = make_machine(Algo::ScatterAllgather, plan, 0);
  Recorder out;
  m->start(out);
  EXPECT_EQ(out.take(), (Acts{send(2, 2), send(1, 1), send(1, 0)}));
  EXPECT_FALSE(m->done());  // owes the ring
  m->on_segment(1, 2, 0, out);
  EXPECT_TRUE(out.take().empty());  // chunk 1 belongs to the successor
  m->on_segment(2, 2, 0, out);
  EXPECT_EQ(out.take(), Acts{send(1, 2)});
  EXPECT_TRUE(m->done());
}

}  // namespace
}  // namespace lanecast::algos::testing
