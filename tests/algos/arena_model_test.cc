// Arena-made machines behave exactly as heap-made ones: the model executor
// runs each configuration twice with the same seed, once over
// make_machine(algo, plan, me) and once over make_machine(..., arena) (one
// arena per rank, of machine_arena_bytes), and every count of the two runs
// (steps, sends, bytes per node and lane, timers, signals, multicast losses)
// must agree, since the event order depends on nothing but the actions. No
// machine may take arena bytes after its construction.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "algos/hypercube.h"
#include "algos/model/model.h"
#include "algos/multilane.h"
#include "algos/registry.h"
#include "tests/algos/arena_helpers.h"
#include "tests/algos/sweep.h"

namespace lanecast::algos::testing {
namespace {

constexpr uint32_t kSeg = 64;

using Build = std::function<MachinePtr(Rank me, MachineArena&)>;

// One run over machines built in p arenas of `bound` bytes each.
model::Result run_in_arenas(const Plan& plan, size_t bound, const Build& build, const model::Options& opt) {
  std::vector<std::unique_ptr<MachineArena>> arenas;  // outlive the run's machines
  for (Rank r = 0; r < plan.nodes(); ++r) arenas.push_back(std::make_unique<MachineArena>(bound));
  int grew = 0;
  model::Result r = model::run(
      plan, [&](Rank me) { return std::make_unique<InArena>(build(me, *arenas[me]), *arenas[me], &grew); }, opt);
  EXPECT_EQ(grew, 0) << "a machine took arena bytes after its construction";
  for (const auto& a : arenas) EXPECT_FALSE(a->busy());
  return r;
}

void expect_same(const model::Result& heap, const model::Result& arena) {
  EXPECT_TRUE(heap.ok) << heap.error;
  EXPECT_TRUE(arena.ok) << arena.error;
  EXPECT_EQ(heap.error, arena.error);
  EXPECT_EQ(heap.steps, arena.steps);
  EXPECT_EQ(heap.sends, arena.sends);
  EXPECT_EQ(heap.multicasts, arena.multicasts);
  EXPECT_EQ(heap.multicast_copies, arena.multicast_copies);
  EXPECT_EQ(heap.multicast_lost, arena.multicast_lost);
  EXPECT_EQ(heap.arms, arena.arms);
  EXPECT_EQ(heap.timers, arena.timers);
  EXPECT_EQ(heap.signals, arena.signals);
  ASSERT_EQ(heap.nodes.size(), arena.nodes.size());
  for (size_t i = 0; i < heap.nodes.size(); ++i) {
    const model::NodeStats &h = heap.nodes[i], &a = arena.nodes[i];
    SCOPED_TRACE("rank " + std::to_string(i));
    EXPECT_EQ(h.bytes_sent, a.bytes_sent);
    EXPECT_EQ(h.bytes_received, a.bytes_received);
    EXPECT_EQ(h.segments_sent, a.segments_sent);
    EXPECT_EQ(h.segments_received, a.segments_received);
    EXPECT_EQ(h.duplicates_received, a.duplicates_received);
    EXPECT_EQ(h.multicasts_sent, a.multicasts_sent);
    EXPECT_EQ(h.signals_sent, a.signals_sent);
    EXPECT_EQ(h.multicast_received, a.multicast_received);
    EXPECT_EQ(h.multicast_lost, a.multicast_lost);
    EXPECT_EQ(h.peers_sent_to, a.peers_sent_to);
    EXPECT_EQ(h.peers_received_from, a.peers_received_from);
    EXPECT_EQ(h.peers, a.peers);
    EXPECT_EQ(h.lane_bytes_sent, a.lane_bytes_sent);
  }
}

std::string config(Algo algo, const Plan& plan, uint64_t seed, model::Order order) {
  return std::string(algo_info(algo).name) + " p=" + std::to_string(plan.nodes()) + " root=" +
         std::to_string(plan.root()) + " lanes=" + std::to_string(plan.lanes()) + " n=" +
         std::to_string(plan.message_bytes()) + " order=" + order_name(order) + " seed=" + std::to_string(seed) +
         " (replay: LANECAST_SEED=" + std::to_string(seed) + ")";
}

TEST(ArenaModel, RegisteredAlgorithmsBehaveAsOnTheHeap) {
  constexpr uint32_t max_segments = 40;
  for (uint64_t seed : sweep_seeds())
    for (const AlgoInfo& a : algorithms())
      for (uint32_t p : {1u, 2u, 3u, 8u, 17u, 64u})
        for (Rank root : sweep_roots(p, seed))
          for (uint16_t lanes : {uint16_t{1}, uint16_t{2}})
            for (uint64_t n : {uint64_t{0}, uint64_t{1}, uint64_t{5} * kSeg + 3, uint64_t{max_segments} * kSeg})
              for (model::Order order : {model::Order::Random, model::Order::Lifo}) {
                const Plan plan = plan_of(p, root, n, kSeg, lanes);
                SCOPED_TRACE(config(a.id, plan, seed, order));
                model::Options opt;
                opt.seed = seed;
                opt.order = order;
                const size_t bound = machine_arena_bytes(p, lanes, max_segments);
                const model::Result arena = run_in_arenas(
                    plan, bound, [&](Rank me, MachineArena& ar) { return make_machine(a.id, plan, me, ar); }, opt);
                expect_same(model::run(a.id, plan, opt), arena);
                if (::testing::Test::HasFailure()) return;
              }
}

// mcast_chain's timer and signal (both options on) and multicast losses.
TEST(ArenaModel, McastChainOptionsAndLoss) {
  for (uint64_t seed : sweep_seeds())
    for (uint32_t p : {2u, 5u, 16u, 33u}) {
      PlanParams pp;
      pp.nodes = p;
      pp.root = p / 2;
      pp.lanes = 2;
      pp.message_bytes = 9 * kSeg + 1;
      pp.segment_bytes = kSeg;
      pp.op = seed;
      pp.algo.root_delay_ns = 5000;
      pp.algo.sync_seed = seed | 1;
      const Plan plan(pp);
      model::Options opt;
      opt.seed = seed;
      opt.mcast_loss = 0.3;
      opt.mcast_seed = seed + 1;
      SCOPED_TRACE(config(Algo::McastChain, plan, seed, opt.order));
      const model::Result arena = run_in_arenas(
          plan, machine_arena_bytes(p, 2, 10),
          [&](Rank me, MachineArena& ar) { return make_machine(Algo::McastChain, plan, me, ar); }, opt);
      const model::Result heap = model::run(Algo::McastChain, plan, opt);
      EXPECT_GT(heap.timers + heap.signals, 0u);
      expect_same(heap, arena);
    }
}

// The option overloads: a hypercube node order, multilane sites.
TEST(ArenaModel, OrdersAndSitesBehaveAsOnTheHeap) {
  for (uint64_t seed : sweep_seeds())
    for (uint32_t p : {3u, 8u, 12u, 31u}) {
      std::vector<Rank> order(p);
      std::iota(order.rbegin(), order.rend(), Rank{0});  // reversed ranks
      const std::vector<uint32_t> sites = topology::MultilaneLayout::contiguous(p, 3);
      const Plan plan = plan_of(p, p - 1, 23 * kSeg, kSeg, 2);
      model::Options opt;
      opt.seed = seed;
      SCOPED_TRACE("p=" + std::to_string(p) + " seed=" + std::to_string(seed));
      expect_same(model::run(plan, [&](Rank me) { return make_hypercube(plan, me, order); }, opt),
                  run_in_arenas(plan, hypercube_arena_bytes(p, 23, true),
                                [&](Rank me, MachineArena& ar) { return make_hypercube(plan, me, order, ar); }, opt));
      expect_same(model::run(plan, [&](Rank me) { return make_multilane(plan, me, sites); }, opt),
                  run_in_arenas(plan, multilane_arena_bytes(p, 23, true),
                                [&](Rank me, MachineArena& ar) { return make_multilane(plan, me, sites, ar); }, opt));
    }
}

}  // namespace
}  // namespace lanecast::algos::testing
