// mcast_chain (Hoefler, Siebert & Rehm): the model executor with multicast
// copies lost per receiver (0, 50%, 100%): the reliable ring repairs every loss,
// so exactly-once delivery, equal bytes and termination hold for any loss;
// plus the machine's actions by hand and its ring structure.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "algos/mcast_chain.h"
#include "algos/model/model.h"
#include "algos/registry.h"
#include "tests/algos/recording.h"
#include "tests/algos/sweep.h"

namespace lanecast::algos::testing {
namespace {

bool run_lossy(uint32_t p, Rank root, uint64_t n, uint32_t s, uint64_t seed, double loss,
               model::Order order = model::Order::Random, model::Result* out = nullptr,
               uint16_t lanes = 1) {
  PlanParams pp;
  pp.nodes = p;
  pp.root = root;
  pp.message_bytes = n;
  pp.segment_bytes = s;
  pp.lanes = lanes;
  const Plan plan(pp);
  model::Options opt;
  opt.seed = seed;
  opt.order = order;
  opt.mcast_loss = loss;
  model::Result r = model::run(Algo::McastChain, plan, opt);
  if (!r.ok) {
    ADD_FAILURE() << "mcast_chain p=" << p << " root=" << root << " n=" << n << " s=" << s
                  << " lanes=" << lanes << " mcast_loss=" << loss << " order=" << order_name(order)
                  << " seed=" << seed << " (replay: LANECAST_SEED=" << seed << ")\n  " << r.error;
    return false;
  }
  if (out) *out = std::move(r);
  return true;
}

class Lossy : public ::testing::TestWithParam<double> {};

// Every p up to 65, edge sizes, the sweep's roots and seeds, random order.
TEST_P(Lossy, EdgeSizesEveryGroupSize) {
  constexpr uint32_t s = 64;
  const double loss = GetParam();
  for (uint64_t seed : sweep_seeds())
    for (uint32_t p = 1; p <= 65; ++p)
      for (Rank root : sweep_roots(p, seed))
        for (uint64_t n : {0u, 1u, s - 1, s, s + 1, 5 * s + 3}) {
          model::Result r;
          if (!run_lossy(p, root, n, s, seed, loss, model::Order::Random, &r)) return;
          const uint64_t m = (n + s - 1) / s;
          ASSERT_EQ(r.multicasts, p > 1 ? m : 0);
          ASSERT_EQ(r.multicast_copies, m * (p - 1));
          if (loss == 0) {
            ASSERT_EQ(r.multicast_lost, 0u);
          }
          if (loss == 1) {
            ASSERT_EQ(r.multicast_lost, r.multicast_copies);
          }
        }
}

// Fifo and Lifo orders, two lanes, and large messages, under each loss.
TEST_P(Lossy, OrdersLanesAndLargeMessages) {
  const double loss = GetParam();
  const uint64_t seed = sweep_seeds().front();
  for (model::Order order : {model::Order::Fifo, model::Order::Lifo})
    for (uint32_t p = 1; p <= 65; p += 4)
      for (uint64_t n : {1u, 65u, 7u * 64})
        if (!run_lossy(p, p / 2, n, 64, seed, order == model::Order::Fifo ? loss : 1 - loss, order)) return;
  for (uint32_t p : {2u, 3u, 9u, 33u})
    if (!run_lossy(p, p - 1, 5 * 64 + 3, 64, seed, loss, model::Order::Random, nullptr, 2)) return;
  for (uint32_t p : {2u, 5u, 17u, 65u})
    if (!run_lossy(p, sweep_roots(p, seed).back(), (uint64_t{1} << 20) + 7, 4096, seed, loss)) return;
}

INSTANTIATE_TEST_SUITE_P(McastChain, Lossy, ::testing::Values(0.0, 0.5, 1.0),
                         [](const ::testing::TestParamInfo<double>& i) {
                           return i.param == 0 ? std::string("loss0")
                                               : i.param == 1 ? std::string("loss100") : std::string("loss50");
                         });

// Half the copies lost is half the copies: the loss generator is wired in.
TEST(McastChain, HalfTheCopiesAreLost) {
  model::Result r;
  ASSERT_TRUE(run_lossy(65, 0, 64 * 64, 64, 7, 0.5, model::Order::Random, &r));
  ASSERT_EQ(r.multicast_copies, 64u * 64);
  EXPECT_GT(r.multicast_lost, r.multicast_copies * 45 / 100);
  EXPECT_LT(r.multicast_lost, r.multicast_copies * 55 / 100);
}

// The ring: each receiver passes every segment once to its successor (none
// from the last), the root multicasts and feeds virtual rank 1; at most two
// point-to-point peers per node; loss changes none of it.
TEST(McastChain, RingStructure) {
  constexpr uint32_t p = 9, s = 64, m = 5;
  for (double loss : {0.0, 0.5, 1.0}) {
    model::Result r;
    ASSERT_TRUE(run_lossy(p, 3, m * s, s, 11, loss, model::Order::Random, &r));
    for (Rank real = 0; real < p; ++real) {
      const Rank v = (real + p - 3) % p;
      const auto& st = r.nodes[real];
      EXPECT_EQ(st.multicasts_sent, v == 0 ? m : 0) << real;
      EXPECT_EQ(st.segments_sent, v == 0 ? 2 * m : v + 1 < p ? m : 0) << real;
      EXPECT_LE(st.peers, 2u) << real;
      EXPECT_EQ(st.peers_sent_to, v + 1 < p ? 1u : 0u) << real;
      if (v != 0) {
        EXPECT_EQ(st.segments_received, m + st.multicast_received) << real;
      }
    }
  }
}

// By hand: root 1 of 4 (virtual ranks 1 -> 0, 2 -> 1, 3 -> 2, 0 -> 3).
TEST(McastChain, Actions) {
  PlanParams pp;
  pp.nodes = 4;
  pp.root = 1;
  pp.message_bytes = 130;
  pp.segment_bytes = 64;
  const Plan plan(pp);
  Recorder out;
  auto root = make_mcast_chain(plan, 1);
  root->start(out);
  EXPECT_EQ(out.take(), (std::vector<Act>{multicast(0), send(2, 0), multicast(1), send(2, 1),
                                          multicast(2), send(2, 2)}));
  EXPECT_TRUE(root->done());

  auto mid = make_mcast_chain(plan, 3);  // virtual 2, successor 0
  mid->start(out);
  EXPECT_TRUE(out.take().empty());
  mid->on_segment(1, 1, 0, out);  // the multicast copy
  EXPECT_EQ(out.take(), (std::vector<Act>{deliver(1), send(0, 1)}));
  mid->on_segment(1, 2, 0, out);  // the ring copy: ignored
  EXPECT_TRUE(out.take().empty());
  mid->on_segment(0, 2, 0, out);
  mid->on_segment(2, 1, 0, out);
  EXPECT_EQ(out.take(), (std::vector<Act>{deliver(0), send(0, 0), deliver(2), send(0, 2)}));
  EXPECT_TRUE(mid->done());

  auto last = make_mcast_chain(plan, 0);  // virtual 3: no edge into the root
  last->start(out);
  for (SegmentIndex i = 0; i < 3; ++i) last->on_segment(i, 3, 0, out);
  EXPECT_EQ(out.take(), (std::vector<Act>{deliver(0), deliver(1), deliver(2)}));
  EXPECT_TRUE(last->done());
}

TEST(McastChain, Registered) {
  ASSERT_TRUE(algo_by_name("mcast_chain").has_value());
  EXPECT_EQ(*algo_by_name("mcast_chain"), Algo::McastChain);
}

}  // namespace
}  // namespace lanecast::algos::testing
