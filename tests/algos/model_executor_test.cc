// The model executor itself: a correct broadcast passes with its statistics,
// and each kind of broken machine is caught with a readable error.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>

#include "algos/model/model.h"
#include "algos/registry.h"
#include "tests/algos/plans.h"

namespace lanecast::algos::model {
namespace {

using plans::plan_of;

// A machine whose behaviour each test writes as two lambdas.
class Scripted final : public Machine {
 public:
  using Start = std::function<void(Actions&)>;
  using OnSeg = std::function<void(SegmentIndex, Rank, Actions&)>;
  Scripted(Start s, OnSeg o, std::function<bool()> d)
      : start_(std::move(s)), on_(std::move(o)), done_(std::move(d)) {}
  void start(Actions& out) override { start_(out); }
  void on_segment(SegmentIndex seg, Rank from, Lane, Actions& out) override { on_(seg, from, out); }
  bool done() const override { return done_(); }

 private:
  Start start_;
  OnSeg on_;
  std::function<bool()> done_;
};

// Linear broadcast from rank 0 with one deliberate fault injected by `twist`.
MachineFactory faulty(const Plan& plan, std::function<void(Rank, SegmentIndex, Actions&)> twist) {
  return [&plan, twist](Rank me) -> std::unique_ptr<Machine> {
    auto got = std::make_shared<uint32_t>(0);
    return std::make_unique<Scripted>(
        [&plan, me](Actions& out) {
          if (me != 0) return;
          for (SegmentIndex s = 0; s < plan.segments(); ++s)
            for (Rank r = 1; r < plan.nodes(); ++r) out.send(r, s, 0);
        },
        [me, got, twist](SegmentIndex seg, Rank, Actions& out) {
          ++*got;
          twist(me, seg, out);
        },
        [&plan, me, got] { return me == 0 || *got == plan.segments(); });
  };
}

TEST(ModelExecutor, CorrectRunReportsStatistics) {
  const Plan plan = plan_of(4, 2, 20, 8);  // 3 segments: 8, 8, 4
  const Result r = run(Algo::Linear, plan, Options{.seed = 7});
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.seed, 7u);
  EXPECT_EQ(r.sends, 9u);
  EXPECT_EQ(r.steps, 4u + 9u);
  EXPECT_EQ(r.nodes[2].bytes_sent, 60u);
  EXPECT_EQ(r.nodes[2].peers_sent_to, 3u);
  EXPECT_EQ(r.nodes[2].peers, 3u);
  EXPECT_EQ(r.nodes[2].lane_bytes_sent.at(0), 60u);
  for (Rank x : {0u, 1u, 3u}) {
    EXPECT_EQ(r.nodes[x].bytes_received, 20u);
    EXPECT_EQ(r.nodes[x].segments_received, 3u);
    EXPECT_EQ(r.nodes[x].peers_received_from, 1u);
    EXPECT_EQ(r.nodes[x].bytes_sent, 0u);
  }
}

TEST(ModelExecutor, SameSeedSameRun) {
  const Plan plan = plan_of(9, 4, 100, 8);
  const Result a = run(Algo::Chain, plan, Options{.seed = 3});
  const Result b = run(Algo::Chain, plan, Options{.seed = 3});
  ASSERT_TRUE(a.ok && b.ok);
  EXPECT_EQ(a.steps, b.steps);
}

void expect_error(const Result& r, const std::string& part) {
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find(part), std::string::npos) << "error: " << r.error;
}

TEST(ModelExecutor, CatchesDeliverTwice) {
  const Plan plan = plan_of(3, 0, 16, 8);
  expect_error(run(plan, faulty(plan, [](Rank, SegmentIndex s, Actions& o) {
                 o.deliver(s);
                 o.deliver(s);
               })),
               "twice");
}

TEST(ModelExecutor, CatchesDeliverNeverReceived) {
  const Plan plan = plan_of(3, 0, 16, 8);
  expect_error(run(plan, faulty(plan, [](Rank, SegmentIndex s, Actions& o) { o.deliver(1 - s); })),
               "never arrived");
}

TEST(ModelExecutor, CatchesMissingDelivery) {
  const Plan plan = plan_of(3, 0, 16, 8);
  expect_error(run(plan, faulty(plan, [](Rank, SegmentIndex s, Actions& o) {
                 if (s == 0) o.deliver(s);
               })),
               "never delivered segment 1");
}

TEST(ModelExecutor, CatchesSendWithoutHolding) {
  const Plan plan = plan_of(3, 0, 16, 8);
  expect_error(run(plan, faulty(plan, [](Rank me, SegmentIndex s, Actions& o) {
                 o.deliver(s);
                 if (me == 1 && s == 0) o.send(2, 1, 0);
               }), Options{.order = Order::Fifo}),
               "without holding it");
}

TEST(ModelExecutor, CatchesBadDestinationsAndLanes) {
  const Plan plan = plan_of(3, 0, 8, 8);
  expect_error(run(plan, faulty(plan, [](Rank me, SegmentIndex s, Actions& o) {
                 o.deliver(s);
                 o.send(me, s, 0);
               })),
               "to itself");
  expect_error(run(plan, faulty(plan, [](Rank, SegmentIndex s, Actions& o) {
                 o.deliver(s);
                 o.send(3, s, 0);
               })),
               "no such rank");
  expect_error(run(plan, faulty(plan, [](Rank, SegmentIndex s, Actions& o) {
                 o.deliver(s);
                 o.send(0, s, 1);
               })),
               "no such lane");
  expect_error(run(plan, faulty(plan, [](Rank, SegmentIndex s, Actions& o) {
                 o.deliver(s);
                 o.send(0, 5, 0);
               })),
               "no such segment");
}

TEST(ModelExecutor, CatchesRootDeliveryAndEmissionAfterDone) {
  const Plan plan = plan_of(2, 0, 8, 8);
  expect_error(run(plan, [](Rank me) {
                 return std::make_unique<Scripted>(
                     [me](Actions& o) {
                       if (me == 0) {
                         o.send(1, 0, 0);
                         o.deliver(0);
                       }
                     },
                     [](SegmentIndex, Rank, Actions&) {}, [] { return true; });
               }),
               "it is the root");
  // Rank 1 claims done() before its segment, then delivers it.
  // Without a twist the scripted linear broadcast is correct.
  EXPECT_TRUE(run(plan, faulty(plan, [](Rank, SegmentIndex s, Actions& o) { o.deliver(s); })).ok);
  expect_error(run(plan, [](Rank me) {
                 return std::make_unique<Scripted>(
                     [me](Actions& o) {
                       if (me == 0) o.send(1, 0, 0);
                     },
                     [](SegmentIndex s, Rank, Actions& o) { o.deliver(s); }, [] { return true; });
               }),
               "after it reported done()");
}

TEST(ModelExecutor, CatchesAMachineThatNeverFinishes) {
  const Plan plan = plan_of(3, 0, 16, 8);
  expect_error(run(plan, [](Rank) {
                 return std::make_unique<Scripted>([](Actions&) {}, [](SegmentIndex, Rank, Actions&) {},
                                                   [] { return false; });
               }),
               "is not done()");
}

// Two ranks bounce a segment forever: caught as a repeated send, or, when
// repeated sends are allowed, by the step bound.
TEST(ModelExecutor, CatchesLivelock) {
  const Plan plan = plan_of(2, 0, 8, 8);
  auto silent = [](Rank me) {
    return std::make_unique<Scripted>(
        [me](Actions& o) {
          if (me == 0) o.send(1, 0, 0);
        },
        [](SegmentIndex s, Rank from, Actions& o) { o.send(from, s, 0); }, [] { return false; });
  };
  expect_error(run(plan, silent), "a second time");
  expect_error(run(plan, silent, Options{.max_steps = 1000, .allow_duplicate_sends = true}),
               "livelock");
}

// Timers and signals: a machine that waits for both before sending works, in
// every order; misuses are caught with readable errors.
class Waiting final : public Machine {
 public:
  Waiting(const Plan& plan, Rank me) : plan_(plan), me_(me) {}
  void start(Actions& out) override {
    if (me_ == 0) {
      out.arm(5, 7);
    } else {
      out.signal(0, 3);
    }
  }
  void on_timer(uint32_t tag, Actions& out) override {
    timer_ = tag == 7;
    go(out);
  }
  void on_signal(Rank, uint32_t tag, Actions& out) override {
    signals_ += tag == 3;
    go(out);
  }
  void on_segment(SegmentIndex seg, Rank, Lane, Actions& out) override {
    out.deliver(seg);
    ++got_;
  }
  bool done() const override { return me_ == 0 ? sent_ : got_ == plan_.segments(); }

 private:
  void go(Actions& out) {
    if (!timer_ || signals_ + 1 < plan_.nodes() || sent_) return;
    for (SegmentIndex s = 0; s < plan_.segments(); ++s)
      for (Rank r = 1; r < plan_.nodes(); ++r) out.send(r, s, 0);
    sent_ = true;
  }
  const Plan& plan_;
  Rank me_;
  bool timer_ = false, sent_ = false;
  uint32_t signals_ = 0, got_ = 0;
};

TEST(ModelExecutor, TimersAndSignalsInEveryOrder) {
  const Plan plan = plan_of(5, 0, 20, 8);
  for (Order order : {Order::Random, Order::Fifo, Order::Lifo})
    for (uint64_t seed = 1; seed <= 20; ++seed) {
      const Result r = run(plan, [&](Rank me) { return std::make_unique<Waiting>(plan, me); },
                           Options{.seed = seed, .order = order});
      ASSERT_TRUE(r.ok) << r.error;
      EXPECT_EQ(r.arms, 1u);
      EXPECT_EQ(r.timers, 1u);
      EXPECT_EQ(r.signals, 4u);
      EXPECT_EQ(r.nodes[3].signals_sent, 1u);
    }
}

TEST(ModelExecutor, CatchesTimerAndSignalMisuse) {
  const Plan plan = plan_of(2, 0, 8, 8);
  auto script = [](std::function<void(Rank, Actions&)> start, std::function<bool(Rank)> done) {
    return [start, done](Rank me) {
      return std::make_unique<Scripted>([me, start](Actions& o) { start(me, o); },
                                        [](SegmentIndex s, Rank, Actions& o) { o.deliver(s); },
                                        [me, done] { return done(me); });
    };
  };
  expect_error(run(plan, script(
                             [](Rank me, Actions& o) {
                               if (me == 0) {
                                 o.send(1, 0, 0);
                                 o.arm(1, 1);
                                 o.arm(2, 2);
                               }
                             },
                             [](Rank) { return false; })),
               "while another is pending");
  expect_error(run(plan, script(
                             [](Rank me, Actions& o) {
                               if (me == 0) {
                                 o.send(1, 0, 0);
                                 o.arm(1, 1);
                               }
                             },
                             [](Rank) { return true; })),
               "done() with a timer pending");
  expect_error(run(plan, script(
                             [](Rank me, Actions& o) {
                               if (me == 0) o.send(1, 0, 0);
                               o.signal(me, 1);
                             },
                             [](Rank) { return true; })),
               "a signal to itself");
  expect_error(run(plan, script(
                             [](Rank me, Actions& o) {
                               if (me == 0) o.send(1, 0, 0);
                               o.signal(7, 1);
                             },
                             [](Rank) { return true; })),
               "no such rank");
}

}  // namespace
}  // namespace lanecast::algos::model
