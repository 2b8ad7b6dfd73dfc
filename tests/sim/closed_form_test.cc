// Every registered algorithm with a known closed form, simulated on the linear
// model (uniform t0, one lane, no framing overhead, FIFO ports), must land within
// 5% of it. The derivations are in docs/algorithms.md. Every algorithm named
// here must be registered (a renamed or removed one fails, it is not skipped),
// and every registered one must have a closed form here or be listed, with the
// reason, in kNotInTheTable.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "algos/registry.h"
#include "algos/sim/simulator.h"
#include "tests/sim/registered.h"

namespace lanecast::algos::sim {
namespace {

struct Model {
  double p, n, s, m, t0, td;  // seconds and bytes; m = ceil(n / s)
};

double log2ceil(double p) { return std::ceil(std::log2(p) - 1e-12); }

// Pipelined heap-shaped binary tree over `count` nodes, each forwarding a
// segment to its left child, then its right one: a hop costs t0 + s td to a left
// child and t0 + 2 s td to a right one. The time from the tree's root to the
// node whose path costs most: heap position v is at depth k = floor(log2(v+1))
// with r = popcount(v+1) - 1 right turns.
double heap_path_max(double count, const Model& x) {
  double worst = 0;
  for (uint64_t v = 0; v < static_cast<uint64_t>(count); ++v) {
    const double k = std::floor(std::log2(double(v + 1))), r = __builtin_popcountll(v + 1) - 1;
    worst = std::max(worst, k * x.t0 + (k + r) * x.s * x.td);
  }
  return worst;
}

// Closed forms in seconds, derived for this simulator's port model.
const std::map<std::string, std::function<double(const Model&)>>& closed_forms() {
  static const std::map<std::string, std::function<double(const Model&)>> f = {
      // The root's port carries (p-1) n bytes; the last frame lands t0 later.
      {"linear", [](const Model& x) { return (x.p - 1) * x.n * x.td + x.t0; }},
      // Store-and-forward rounds, largest subtree first: ceil(log2 p)(t0 + n td).
      {"binomial", [](const Model& x) { return log2ceil(x.p) * (x.t0 + x.n * x.td); }},
      // First segment pays t0 + s td per hop, the rest streams behind it.
      // Dimension-ordered, store-and-forward: the same rounds as binomial.
      {"hypercube", [](const Model& x) { return log2ceil(x.p) * (x.t0 + x.n * x.td); }},
      {"chain", [](const Model& x) { return (x.p - 1) * (x.t0 + x.s * x.td) + (x.n - x.s) * x.td; }},
      // The root (two children from p = 3) paces segments 2 s td apart; the
      // last one leaves it 2 (m-1) s td after the first, which takes the most
      // expensive path. For a full tree of depth D: 2 n td + D (t0 + 2 s td) - 2 s td.
      {"binary",
       [](const Model& x) {
         if (x.p <= 2) return (x.p - 1) * (x.t0 + x.n * x.td);
         return 2 * (x.m - 1) * x.s * x.td + heap_path_max(x.p, x);
       }},
      // Two heaps over the p-1 receivers, alternate segments: the root sends
      // one segment per s td, each tree gets one per 2 s td and forwards it
      // like binary. The last segment reaches its heap root at n td + t0.
      {"bintree",
       [](const Model& x) {
         if (x.p <= 2) return (x.p - 1) * (x.t0 + x.n * x.td);
         return x.n * x.td + x.t0 + heap_path_max(x.p - 1, x);
       }},
      // No multicast loss: the root's port carries every segment twice (its
      // multicast, its ring send), so segment i reaches everyone at 2 i s td +
      // t0 + s td; the next-to-last ring node forwards the last one (s td).
      // With p = 2 the only receiver forwards nothing.
      {"mcast_chain",
       [](const Model& x) { return 2 * x.n * x.td + x.t0 - (x.p <= 2 ? x.s * x.td : 0); }},
      // One lane (two queues on one port): the root sends half A and half B
      // interleaved, one segment per s td, into two heaps over the p-1
      // receivers, like bintree. The two-lane form is MultilaneTwoLanes below.
      {"multilane",
       [](const Model& x) { return x.n * x.td + x.t0 + heap_path_max(x.p - 1, x); }},
  };
  return f;
}

// Registered algorithms that closed_forms() leaves out, each with the reason:
// a form that needs a test of its own (below), or none at all.
const std::map<std::string, std::string> kNotInTheTable = {
    {"symmetric",
     "own tests below: Juhasz's form is exact for whole pieces only; segment-pipelined, incast makes it a bound"},
    {"scatter_allgather",
     "own test below: the machine overlaps van de Geijn's t0 terms, so only the bandwidth term (8 MiB) is held"},
    {"circulant",
     "own test below: n - 1 + q rounds, but a round's forward waits t0 for its segment, so the form holds for "
     "large messages (8 MiB)"},
};

std::vector<std::string> form_names() {
  std::vector<std::string> names;
  for (const auto& [name, form] : closed_forms()) names.push_back(name);
  return names;
}

struct Row {
  std::string algo;
  uint32_t p;
  uint64_t n;
  double predicted_us, closed_us, error_pct;
};

std::vector<Row>& rows() {
  static std::vector<Row> r;
  return r;
}

void check(const std::string& name, uint32_t p, uint64_t n, uint32_t s,
           const std::function<double(const Model&)>& form = nullptr, const std::string& label = "",
           double tolerance_pct = 5.0, uint16_t lanes = 1) {
  ASSERT_TRUE(test::registered(name));
  const auto id = algo_by_name(name);
  PlanParams pp;
  pp.nodes = p;
  pp.message_bytes = n;
  pp.segment_bytes = s;
  pp.lanes = lanes;
  const Plan plan(pp);
  Network net;
  net.latency = LatencyMap(10 * kPicosPerMicro);
  net.bytes_per_second = 1.25e9;
  const SimResult r = simulate(*id, plan, net);
  ASSERT_TRUE(r.complete) << name << " p=" << p << " n=" << n << ": " << r.problem;
  const Model x{double(p), double(n), double(s), double(plan.segments()), 10e-6, 1 / 1.25e9};
  const double closed = form ? form(x) : closed_forms().at(name)(x);
  const double predicted = double(r.completion) * 1e-12;
  const double err = (predicted - closed) / closed * 100;
  rows().push_back({label.empty() ? name : label, p, n, predicted * 1e6, closed * 1e6, err});
  if (tolerance_pct > 0) {
    EXPECT_LE(std::abs(err), tolerance_pct) << name << " p=" << p << " n=" << n << " predicted " << predicted * 1e6
                                << " us, closed form " << closed * 1e6 << " us";
  }
}

class ClosedForm : public ::testing::TestWithParam<std::string> {};

TEST_P(ClosedForm, WithinFivePercent) {
  const std::string name = GetParam();
  ASSERT_TRUE(test::registered(name));
  for (uint32_t p : {2u, 3u, 8u, 17u, 64u})
    for (uint64_t n : {uint64_t{1} << 20, uint64_t{8} << 20}) check(name, p, n, 8192);
}

// One case per closed form: a form whose algorithm was renamed fails its case.
INSTANTIATE_TEST_SUITE_P(Registered, ClosedForm, ::testing::ValuesIn(form_names()),
                         [](const auto& info) { return info.param; });

// multilane on two lanes with a port each: half A (the first h = ceil(m/2)
// segments) and half B leave the root on two lanes at once, one segment per
// s td each; the last segment of a half leaves the root (h-1) s td after the
// first and then crosses D + 1 hops of t0 + s td, D = floor(log2(p-1)) the
// depth of the heap over the p-1 receivers (its own part, then the leaf swap
// into the other part). Every rx port hears one parent per lane: exact.
TEST(ClosedForm, MultilaneTwoLanes) {
  ASSERT_TRUE(test::registered("multilane"));
  const auto form = [](const Model& x) {
    const double h = std::ceil(x.m / 2), d = std::floor(std::log2(x.p - 1) + 1e-12);
    return (h - 1) * x.s * x.td + (d + 1) * (x.t0 + x.s * x.td);
  };
  for (uint32_t p : {2u, 3u, 8u, 17u, 64u})
    for (uint64_t n : {uint64_t{1} << 20, uint64_t{8} << 20}) {
      check("multilane", p, n, 8192, form, "multilane, 2 lanes", 5.0, 2);
      EXPECT_LE(std::abs(rows().back().error_pct), 1e-6) << "p=" << p << " n=" << n << ": not exact";
    }
}

// Juhasz's own analysis: the root sends every receiver its whole piece (n/(p-1)
// bytes, here one segment) at once, then every receiver forwards its piece to
// the p-2 others: 2 t0 + n td (2 - 1/(p-1)), his "2 - 1/p" counting receivers.
TEST(ClosedForm, SymmetricWithWholePiecesIsJuhasz) {
  ASSERT_TRUE(test::registered("symmetric"));
  for (uint32_t p : {3u, 8u, 17u, 64u})
    for (uint64_t n : {uint64_t{1} << 20, uint64_t{8} << 20}) {
      const uint32_t piece = static_cast<uint32_t>((n + p - 2) / (p - 1));
      check("symmetric", p, n, piece,
            [](const Model& x) { return 2 * x.t0 + x.n * x.td * (2 - 1 / (x.p - 1)); },
            "symmetric, s = n/(p-1)");
    }
}

// Segment-pipelined, the default: the root's last frame leaves at n td and lands
// at its piece's owner t0 later; the owner sends it to the p - 2 others, s td
// each; the last copy lands t0 after: n td + 2 t0 + (p-2) s td is a lower bound.
// It is not a closed form: every receiver's rx port carries n bytes and is busy
// all the time in steady state, so the bursts of forwarded copies that reach it
// together (incast) delay the end by up to (p-2) s td more when pieces have few
// segments. The simulation must lie between the bound and Juhasz's whole-piece
// time (pipelining never loses).
TEST(ClosedForm, SymmetricPipelinedBetweenBoundAndJuhasz) {
  ASSERT_TRUE(test::registered("symmetric"));
  for (uint32_t p : {3u, 8u, 17u, 64u})
    for (uint64_t n : {uint64_t{1} << 20, uint64_t{8} << 20}) {
      const auto bound = [](const Model& x) { return x.n * x.td + 2 * x.t0 + (x.p - 2) * x.s * x.td; };
      check("symmetric", p, n, 8192, bound, "symmetric (lower bound)", -1);
      const Row& r = rows().back();
      const double juhasz_us = 20 + double(n) * 0.8e-3 * (2 - 1.0 / (p - 1));
      EXPECT_GE(r.predicted_us, r.closed_us * (1 - 1e-9)) << "p=" << p << " n=" << n;
      EXPECT_LE(r.predicted_us, juhasz_us) << "p=" << p << " n=" << n;
    }
}

// van de Geijn: binomial scatter of p chunks, then allgather by a ring
// ((ceil(log2 p) + p - 1) t0 + 2 (p-1)/p n td) or, for powers of two, by
// recursive doubling (2 log2 p t0 + 2 (p-1)/p n td). The machine pipelines
// segments through both phases, so the t0 terms overlap: the bandwidth term is
// what must match (8 MiB); at 1 MiB the simulation is up to ~7% below.
TEST(ClosedForm, ScatterAllgatherMatchesVanDeGeijn) {
  ASSERT_TRUE(test::registered("scatter_allgather"));
  const auto form = [](const Model& x) {
    const bool pow2 = (static_cast<uint64_t>(x.p) & (static_cast<uint64_t>(x.p) - 1)) == 0;
    const double latency = pow2 ? 2 * std::log2(x.p) : log2ceil(x.p) + x.p - 1;
    return latency * x.t0 + 2 * (x.p - 1) / x.p * x.n * x.td;
  };
  for (uint32_t p : {2u, 3u, 8u, 17u, 64u})
    for (uint64_t n : {uint64_t{1} << 20, uint64_t{8} << 20})
      check("scatter_allgather", p, n, 8192, form, "", n >= (uint64_t{8} << 20) ? 5.0 : -1);
}

// Träff's circulant schedule: the root's q first segments reach the q ranks
// that start each subtree of the graph after t0 + s td each; from then on
// every rank sends one segment per s td, so the message streams n td behind
// the first q rounds: q t0 + n td + (q - 1) s td. A round that must wait t0
// for the segment it forwards stretches this when segments are few, so only
// 8 MiB is held to it (docs/algorithms.md).
TEST(ClosedForm, CirculantStreamsBehindLogPRounds) {
  ASSERT_TRUE(test::registered("circulant"));
  const auto form = [](const Model& x) {
    const double q = log2ceil(x.p);
    return q * x.t0 + x.n * x.td + (q - 1) * x.s * x.td;
  };
  for (uint32_t p : {2u, 3u, 8u, 17u, 64u})
    for (uint64_t n : {uint64_t{1} << 20, uint64_t{8} << 20})
      check("circulant", p, n, 8192, form, "", n >= (uint64_t{8} << 20) ? 5.0 : -1);
}

// A new algorithm comes with its closed form here, or with the reason it has
// none in kNotInTheTable; and every name here is a registered algorithm.
TEST(ClosedForm, EveryRegisteredAlgorithmHasOne) {
  for (const auto& a : algorithms()) {
    const std::string name(a.name);
    const bool in_table = closed_forms().count(name) > 0, listed = kNotInTheTable.count(name) > 0;
    EXPECT_TRUE(in_table || listed) << name << " is registered without a closed form: add it to closed_forms(), "
                                    << "or to kNotInTheTable with the reason";
    EXPECT_FALSE(in_table && listed) << name << " is both in closed_forms() and in kNotInTheTable";
  }
  for (const auto& [name, form] : closed_forms()) EXPECT_TRUE(test::registered(name)) << "closed_forms()";
  for (const auto& [name, why] : kNotInTheTable) {
    EXPECT_TRUE(test::registered(name)) << "kNotInTheTable";
    EXPECT_FALSE(why.empty()) << name << ": say why it is not in closed_forms()";
  }
}

// Prints the table of docs/algorithms.md ("closed-form check") after the suite.
class PrintRows : public ::testing::Environment {
 public:
  void TearDown() override {
    if (rows().empty()) return;
    std::printf("\n| algo | p | n | predicted us | closed form us | error %% |\n|---|---|---|---|---|---|\n");
    for (const Row& r : rows())
      std::printf("| %s | %u | %lluM | %.1f | %.1f | %+.2f |\n", r.algo.c_str(), r.p,
                  static_cast<unsigned long long>(r.n >> 20), r.predicted_us, r.closed_us, r.error_pct);
  }
};
const auto* const kPrint = ::testing::AddGlobalTestEnvironment(new PrintRows);

}  // namespace
}  // namespace lanecast::algos::sim
