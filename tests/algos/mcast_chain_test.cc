// mcast_chain (Hoefler, Siebert & Rehm): the model executor with multicast
// copies lost per receiver (0, 50%, 100%), with and without the paper's root
// delay and randomized synchronisation: the reliable ring repairs every loss,
// so exactly-once delivery, equal bytes and termination hold for any loss and
// any order of timers, signals and arrivals; plus the machine's actions by
// hand, its ring structure, and the synchronising rank's distribution.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "algos/mcast_chain.h"
#include "algos/model/model.h"
#include "algos/registry.h"
#include "tests/algos/recording.h"
#include "tests/algos/sweep.h"

namespace lanecast::algos::testing {
namespace {

// The paper's options, one at a time and both; repair on request alone and
// with both.
enum class Opt { None, Delay, Sync, Both, Nack, NackBoth };
const char* opt_name(Opt o) {
  switch (o) {
    case Opt::None: return "none";
    case Opt::Delay: return "delay";
    case Opt::Sync: return "sync";
    case Opt::Both: return "both";
    case Opt::Nack: return "nack";
    case Opt::NackBoth: return "nack_both";
  }
  return "?";
}
bool has_delay(Opt o) { return o == Opt::Delay || o == Opt::Both || o == Opt::NackBoth; }
bool has_sync(Opt o) { return o == Opt::Sync || o == Opt::Both || o == Opt::NackBoth; }
bool has_nack(Opt o) { return o == Opt::Nack || o == Opt::NackBoth; }
AlgoOptions options_of(Opt o, uint64_t seed) {
  AlgoOptions a;
  if (has_delay(o)) a.root_delay_ns = 20'000;
  if (has_sync(o)) a.sync_seed = seed | 1;
  a.nack_repair = has_nack(o);
  return a;
}

bool run_lossy(uint32_t p, Rank root, uint64_t n, uint32_t s, uint64_t seed, double loss,
               model::Order order = model::Order::Random, model::Result* out = nullptr,
               uint16_t lanes = 1, Opt options = Opt::None, uint64_t op = 1) {
  PlanParams pp;
  pp.nodes = p;
  pp.root = root;
  pp.message_bytes = n;
  pp.segment_bytes = s;
  pp.lanes = lanes;
  pp.algo = options_of(options, seed);
  pp.op = op;
  const Plan plan(pp);
  model::Options opt;
  opt.seed = seed;
  opt.order = order;
  opt.mcast_loss = loss;
  model::Result r = model::run(Algo::McastChain, plan, opt);
  if (!r.ok) {
    ADD_FAILURE() << "mcast_chain p=" << p << " root=" << root << " n=" << n << " s=" << s
                  << " lanes=" << lanes << " mcast_loss=" << loss << " order=" << order_name(order)
                  << " options=" << opt_name(options) << " op=" << op
                  << " seed=" << seed << " (replay: LANECAST_SEED=" << seed << ")\n  " << r.error;
    return false;
  }
  if (out) *out = std::move(r);
  return true;
}

class Lossy : public ::testing::TestWithParam<std::tuple<double, Opt>> {};

// Every p up to 65, edge sizes, the sweep's roots and seeds, random order; the
// operation index varies, so the synchronising rank does too.
TEST_P(Lossy, EdgeSizesEveryGroupSize) {
  constexpr uint32_t s = 64;
  const auto [loss, opt] = GetParam();
  const bool delay = has_delay(opt), sync = has_sync(opt), nack = has_nack(opt);
  for (uint64_t seed : sweep_seeds())
    for (uint32_t p = 1; p <= 65; ++p)
      for (Rank root : sweep_roots(p, seed))
        for (uint64_t n : {0u, 1u, s - 1, s, s + 1, 5 * s + 3}) {
          model::Result r;
          const uint64_t op = 1 + p + root + n;
          if (!run_lossy(p, root, n, s, seed, loss, model::Order::Random, &r, 1, opt, op)) return;
          const uint64_t m = (n + s - 1) / s;
          ASSERT_EQ(r.multicasts, p > 1 ? m : 0);
          ASSERT_EQ(r.multicast_copies, m * (p - 1));
          const bool active = p > 1 && m > 0;  // the options apply
          ASSERT_EQ(r.timers, active && delay ? 1u : 0u);
          if (!nack || m < 3) {  // one or two segments: the paper's ring
            ASSERT_EQ(r.signals, active && sync ? 1u : 0u);
          } else if (active) {
            // The synchronising signal, each receiver's "all held", and one
            // request per segment a receiver found missing (all but the last
            // when every copy is lost).
            const uint64_t base = (sync ? 1u : 0u) + (p - 1);
            ASSERT_GE(r.signals, base);
            ASSERT_LE(r.signals, base + (p - 1) * (m - 1));
            if (loss == 1) {
              ASSERT_EQ(r.signals, base + (p - 1) * (m - 1));
            }
          }
          if (active && sync) {
            ASSERT_GE(r.nodes[mcast_sync_rank(seed | 1, op, p, root)].signals_sent, 1u);
            if (!nack || m < 3) {
              ASSERT_EQ(r.nodes[mcast_sync_rank(seed | 1, op, p, root)].signals_sent, 1u);
            }
          }
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
  const auto [loss, opt] = GetParam();
  const uint64_t seed = sweep_seeds().front();
  for (model::Order order : {model::Order::Fifo, model::Order::Lifo})
    for (uint32_t p = 1; p <= 65; p += 4)
      for (uint64_t n : {1u, 65u, 7u * 64})
        if (!run_lossy(p, p / 2, n, 64, seed, order == model::Order::Fifo ? loss : 1 - loss, order, nullptr, 1,
                       opt, p + n))
          return;
  for (uint32_t p : {2u, 3u, 9u, 33u})
    if (!run_lossy(p, p - 1, 5 * 64 + 3, 64, seed, loss, model::Order::Random, nullptr, 2, opt, p)) return;
  for (uint32_t p : {2u, 5u, 17u, 65u})
    if (!run_lossy(p, sweep_roots(p, seed).back(), (uint64_t{1} << 20) + 7, 4096, seed, loss,
                   model::Order::Random, nullptr, 1, opt, 3 * p))
      return;
}

INSTANTIATE_TEST_SUITE_P(McastChain, Lossy,
                         ::testing::Combine(::testing::Values(0.0, 0.5, 1.0),
                                            ::testing::Values(Opt::None, Opt::Delay, Opt::Sync, Opt::Both,
                                                              Opt::Nack, Opt::NackBoth)),
                         [](const ::testing::TestParamInfo<std::tuple<double, Opt>>& i) {
                           const double loss = std::get<0>(i.param);
                           return std::string(loss == 0 ? "loss0" : loss == 1 ? "loss100" : "loss50") + "_" +
                                  opt_name(std::get<1>(i.param));
                         });

// Half the copies lost is half the copies: the loss generator is wired in.
TEST(McastChain, HalfTheCopiesAreLost) {
  model::Result r;
  ASSERT_TRUE(run_lossy(65, 0, 64 * 64, 64, 7, 0.5, model::Order::Random, &r));
  ASSERT_EQ(r.multicast_copies, 64u * 64);
  EXPECT_GT(r.multicast_lost, r.multicast_copies * 45 / 100);
  EXPECT_LT(r.multicast_lost, r.multicast_copies * 55 / 100);
}

// Repair on request: every ring edge carries the last segment and what the
// successor asked for, nothing else - without loss (FIFO order) one frame per
// edge and one "all held" back; with every copy lost, all of it. The root
// sends each segment once (its multicast) plus the last.
TEST(McastChain, RepairOnRequestSendsOnlyWhatWasMissed) {
  constexpr uint32_t p = 9, s = 64, m = 40;
  for (double loss : {0.0, 0.5, 1.0}) {
    SCOPED_TRACE("loss " + std::to_string(loss));
    model::Result r;
    ASSERT_TRUE(run_lossy(p, 3, m * s, s, 11, loss, model::Order::Fifo, &r, 1, Opt::Nack));
    EXPECT_EQ(r.nodes[3].multicasts_sent, m);
    for (Rank real = 0; real < p; ++real) {
      const Rank v = (real + p - 3) % p;
      const auto& st = r.nodes[real];
      EXPECT_LE(st.peers, 2u) << real;
      if (v + 1 == p) {
        EXPECT_EQ(st.segments_sent, 0u) << real;
        continue;
      }
      const auto& next = r.nodes[(real + 1) % p];
      // One send per request of the successor, and the last segment (the
      // root's multicasts are counted apart).
      const uint64_t sent = st.segments_sent - st.multicasts_sent;
      EXPECT_EQ(sent, 1 + (next.signals_sent - 1)) << real;
      if (loss == 0) {
        EXPECT_EQ(sent, 1u) << real;
      }
      if (loss == 1) {
        EXPECT_EQ(sent, m) << real;
      }
    }
  }
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

// The root holds everything back until its delay fired and its synchronising
// rank signalled, in either order; only that rank signals; an empty message or
// a group of one waits for nothing.
TEST(McastChain, OptionsByHand) {
  PlanParams pp;
  pp.nodes = 4;
  pp.root = 1;
  pp.message_bytes = 130;
  pp.segment_bytes = 64;
  pp.op = 9;
  pp.algo.root_delay_ns = 5000;
  pp.algo.sync_seed = 42;
  const Plan plan(pp);
  const Rank c = mcast_sync_rank(42, 9, 4, 1);
  ASSERT_NE(c, 1u);
  const std::vector<Act> all{multicast(0), send(2, 0), multicast(1), send(2, 1), multicast(2), send(2, 2)};
  Recorder out;
  for (bool timer_first : {true, false}) {
    auto root = make_mcast_chain(plan, 1);
    root->start(out);
    EXPECT_EQ(out.take(), (std::vector<Act>{arm(5000, 1)}));
    EXPECT_FALSE(root->done());
    root->on_signal((c + 1) % 4 == 1 ? (c + 2) % 4 : (c + 1) % 4, 1, out);  // not the chosen rank: ignored
    root->on_signal(c, 2, out);                                             // another tag: ignored
    if (timer_first) root->on_timer(1, out);
    else root->on_signal(c, 1, out);
    EXPECT_TRUE(out.take().empty());
    EXPECT_FALSE(root->done());
    if (timer_first) root->on_signal(c, 1, out);
    else root->on_timer(1, out);
    EXPECT_EQ(out.take(), all);
    EXPECT_TRUE(root->done());
    root->on_timer(1, out);  // late repeats change nothing
    root->on_signal(c, 1, out);
    EXPECT_TRUE(out.take().empty());
  }
  for (Rank r : {0u, 2u, 3u}) {
    auto m = make_mcast_chain(plan, r);
    m->start(out);
    EXPECT_EQ(out.take(), r == c ? std::vector<Act>{signal(1, 1)} : std::vector<Act>{}) << r;
  }

  pp.message_bytes = 0;  // nothing to multicast: no option applies
  const Plan empty(pp);
  for (Rank r = 0; r < 4; ++r) {
    auto m = make_mcast_chain(empty, r);
    m->start(out);
    EXPECT_TRUE(out.take().empty()) << r;
    EXPECT_TRUE(m->done()) << r;
  }
  pp.nodes = 1;
  pp.root = 0;
  pp.message_bytes = 100;
  const Plan alone(pp);
  auto m = make_mcast_chain(alone, 0);
  m->start(out);
  EXPECT_TRUE(out.take().empty());
  EXPECT_TRUE(m->done());
}

// The synchronising rank: never the root, uniform over the p-1 others across
// operations, a pure function of its arguments, different across seeds.
TEST(McastChain, SyncRankIsUniformOverNonRoots) {
  for (uint32_t p : {2u, 3u, 5u, 17u, 64u})
    for (Rank root : {Rank{0}, p - 1, p / 2}) {
      constexpr uint64_t kPerRank = 4000;
      const uint64_t ops = kPerRank * (p - 1);
      std::vector<uint64_t> count(p, 0);
      for (uint64_t op = 1; op <= ops; ++op) {
        const Rank c = mcast_sync_rank(12345, op, p, root);
        ASSERT_LT(c, p);
        ASSERT_EQ(c, mcast_sync_rank(12345, op, p, root));
        ++count[c];
      }
      EXPECT_EQ(count[root], 0u) << "p=" << p << " root=" << root;
      // Pearson's chi-square over the p-1 non-roots, below its 99.9% quantile
      // (approximated generously: df + 5 sqrt(2 df) + 10).
      double chi2 = 0;
      for (Rank r = 0; r < p; ++r) {
        if (r == root) continue;
        const double d = double(count[r]) - double(kPerRank);
        chi2 += d * d / double(kPerRank);
      }
      const double df = p - 2;
      EXPECT_LT(chi2, df + 5 * std::sqrt(2 * df) + 10) << "p=" << p << " root=" << root;
    }
  // Seeds differ in their choices; p = 2 has one choice.
  uint32_t same = 0;
  for (uint64_t op = 1; op <= 1000; ++op) same += mcast_sync_rank(1, op, 64, 0) == mcast_sync_rank(2, op, 64, 0);
  EXPECT_LT(same, 50u);
  for (uint64_t op = 1; op <= 10; ++op) EXPECT_EQ(mcast_sync_rank(op * 7, op, 2, 1), 0u);
  EXPECT_THROW(mcast_sync_rank(1, 1, 1, 0), std::invalid_argument);
  EXPECT_THROW(mcast_sync_rank(1, 1, 4, 4), std::invalid_argument);
}

TEST(McastChain, Registered) {
  ASSERT_TRUE(algo_by_name("mcast_chain").has_value());
  EXPECT_EQ(*algo_by_name("mcast_chain"), Algo::McastChain);
}

}  // namespace
}  // namespace lanecast::algos::testing
