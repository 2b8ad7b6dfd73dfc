// multilane (issue 3): the dual-tree shape with its leaf swap, lanes and site
// chaining (topology/multilane.h), one machine driven by hand, and the model
// executor with random legal orders for p = 1..65 on one and two lanes, one,
// two and three sites, with the structural properties: the root sends M bytes,
// half per lane; every node receives M bytes, each half on its own lane; every
// interior node sends on both lanes. Seeds are printed by the failures and
// replayed with LANECAST_SEED=N.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <set>
#include <stdexcept>
#include <vector>

#include "algos/model/model.h"
#include "algos/multilane.h"
#include "algos/registry.h"
#include "algos/topology/multilane.h"
#include "tests/algos/recording.h"
#include "tests/algos/sweep.h"

namespace lanecast::algos::testing {
namespace {

using topology::MultilaneLayout;
using topology::MultilanePlace;

constexpr uint32_t kMaxNodes = 65;

// Site assignments to try for p nodes: one site, contiguous blocks of 2 and 3,
// and three interleaved sites (rank r in site (r * 7) % 3, ids out of order).
std::vector<std::vector<uint32_t>> site_cases(uint32_t p) {
  std::vector<std::vector<uint32_t>> out{{}};
  for (uint32_t s : {2u, 3u})
    if (s <= p) out.push_back(MultilaneLayout::contiguous(p, s));
  if (p >= 3) {
    std::vector<uint32_t> mixed(p);
    for (Rank r = 0; r < p; ++r) mixed[r] = 10 + (r * 7) % 3;
    out.push_back(mixed);
  }
  return out;
}

uint32_t count_sites(const std::vector<uint32_t>& sites) {
  return sites.empty() ? 1 : static_cast<uint32_t>(std::set<uint32_t>(sites.begin(), sites.end()).size());
}

// The shape: every non-root node has one parent per half, and that parent
// lists it, on the lane the node expects; a node's two sends use two lanes and
// so do its two receptions; nobody sends more than two copies of a segment.
TEST(MultilaneShape, OneParentPerHalfAndLanesAlternate) {
  for (uint32_t p = 1; p <= kMaxNodes; ++p)
    for (const auto& sites : site_cases(p))
      for (Rank root : {Rank{0}, p - 1, p / 2}) {
        SCOPED_TRACE(::testing::Message() << "p=" << p << " root=" << root << " sites=" << count_sites(sites));
        const MultilaneLayout layout(p, root, sites);
        ASSERT_EQ(layout.sites(), count_sites(sites));
        std::vector<MultilanePlace> pl(p);
        for (Rank r = 0; r < p; ++r) pl[r] = layout.place(r);
        std::vector<std::array<uint32_t, 2>> parents(p, {0, 0});
        for (Rank r = 0; r < p; ++r) {
          const MultilanePlace& x = pl[r];
          ASSERT_LE(x.count[0] + x.count[1], 2u) << "rank " << r;
          std::vector<Lane> lanes;
          for (uint32_t h = 0; h < 2; ++h)
            for (uint32_t i = 0; i < x.count[h]; ++i) {
              const Rank c = x.to[h][i];
              ASSERT_LT(c, p);
              ASSERT_NE(c, root) << "rank " << r;
              ++parents[c][h];
              EXPECT_EQ(pl[c].from[h], r) << "rank " << r << " -> " << c << " half " << h;
              EXPECT_EQ(pl[c].from_lane[h], x.lane[h][i]) << "rank " << r << " -> " << c;
              lanes.push_back(x.lane[h][i]);
            }
          if (lanes.size() == 2) {
            EXPECT_NE(lanes[0], lanes[1]) << "rank " << r << " sends on one lane";
          }
        }
        if (p > 1) {
          EXPECT_EQ(pl[root].count[0], 1u);
          EXPECT_EQ(pl[root].count[1], 1u);
          EXPECT_EQ(pl[root].lane[0][0], 0u);  // A on lane 0, B on lane 1
          EXPECT_EQ(pl[root].lane[1][0], 1u);
        }
        for (Rank r = 0; r < p; ++r) {
          if (r == root) continue;
          EXPECT_EQ(parents[r][0], 1u) << "rank " << r;
          EXPECT_EQ(parents[r][1], 1u) << "rank " << r;
          EXPECT_NE(pl[r].from_lane[0], pl[r].from_lane[1]) << "rank " << r << " receives on one lane";
        }
      }
}

// Every receiver but the last site's tail sends twice: in a site of n members
// at most two send fewer (the last of each part), and only the last site's
// (earlier sites feed the next one with their free slots).
TEST(MultilaneShape, AllButTwoSendTwice) {
  for (uint32_t p = 2; p <= kMaxNodes; ++p)
    for (const auto& sites : site_cases(p)) {
      const MultilaneLayout layout(p, 0, sites);
      uint32_t short_of_two = 0;
      for (Rank r = 1; r < p; ++r) {
        const MultilanePlace x = layout.place(r);
        if (x.count[0] + x.count[1] < 2) {
          ++short_of_two;
          EXPECT_EQ(x.site, layout.sites() - 1) << "p=" << p << " rank " << r;
        }
      }
      EXPECT_LE(short_of_two, 2u) << "p=" << p << " sites=" << layout.sites();
    }
}

// Site chaining: site c's tree roots are fed from site c - 1 (or the root).
TEST(MultilaneShape, SitesAreChained) {
  const uint32_t p = 20;
  const std::vector<uint32_t> sites = MultilaneLayout::contiguous(p, 3);  // 0..6, 7..13, 14..19
  const MultilaneLayout layout(p, 0, sites);
  for (Rank r = 1; r < p; ++r) {
    const MultilanePlace x = layout.place(r);
    EXPECT_EQ(x.site, sites[r]);
    for (uint32_t h = 0; h < 2; ++h) {
      const Rank from = x.from[h];
      if (from == 0) {
        EXPECT_EQ(sites[r], 0u) << "rank " << r;
      } else {
        EXPECT_TRUE(sites[from] == sites[r] || sites[from] + 1 == sites[r]) << r << " from " << from;
      }
    }
  }
  // Root alone in its site: it feeds the next site's two roots.
  const std::vector<uint32_t> alone{0, 1, 1, 1, 2, 2};
  const MultilaneLayout l2(6, 0, alone);
  const MultilanePlace root = l2.place(0);
  EXPECT_EQ(root.to[0][0], 1u);  // site 1: members 1, 2 | 3
  EXPECT_EQ(root.to[1][0], 3u);
  EXPECT_EQ(l2.place(2).site, 1u);
  EXPECT_EQ(l2.place(5).site, 2u);
}

TEST(MultilaneShape, BadInputsThrow) {
  const std::vector<uint32_t> two{0, 1};
  EXPECT_THROW(MultilaneLayout(3, 0, two), std::invalid_argument);
  EXPECT_THROW(MultilaneLayout(3, 3), std::invalid_argument);
  EXPECT_THROW(MultilaneLayout::contiguous(3, 4), std::invalid_argument);
  EXPECT_THROW(MultilaneLayout(3, 0).place(3), std::invalid_argument);
  PlanParams pp;
  pp.nodes = 4;
  const Plan plan(pp);
  EXPECT_THROW(make_multilane(plan, 0, MultilaneLayout(5, 0)), std::invalid_argument);
  EXPECT_THROW(make_multilane(plan, 0, MultilaneLayout(4, 1)), std::invalid_argument);
}

// p = 7, root 0, one site: part A = ranks 1, 2, 3, part B = 4, 5, 6. Heap A
// is 1, 2, 3, 4, 5, 6; heap B is 4, 5, 6, 1, 2, 3.
TEST(MultilaneMachine, HandDriven) {
  PlanParams pp;
  pp.nodes = 7;
  pp.lanes = 2;
  pp.segment_bytes = 8;
  pp.message_bytes = 4 * 8;  // A = segments 0, 1; B = 2, 3
  const Plan plan(pp);
  Recorder out;
  auto root = make_multilane(plan, 0);
  root->start(out);
  EXPECT_EQ(out.take(), (std::vector<Act>{send(1, 0, 0), send(4, 2, 1), send(1, 1, 0), send(4, 3, 1)}));
  EXPECT_TRUE(root->done());

  auto two = make_multilane(plan, 2);  // interior of tree A
  two->start(out);
  EXPECT_TRUE(out.take().empty());
  two->on_segment(1, 1, 1, out);
  EXPECT_EQ(out.take(), (std::vector<Act>{deliver(1), send(4, 1, 0), send(5, 1, 1)}));
  two->on_segment(3, 5, 0, out);  // half B: a leaf of tree B, nothing to pass on
  EXPECT_EQ(out.take(), (std::vector<Act>{deliver(3)}));
  two->on_segment(1, 1, 1, out);  // a copy it holds
  EXPECT_TRUE(out.take().empty());
  two->on_segment(2, 5, 0, out);
  two->on_segment(0, 1, 1, out);
  EXPECT_EQ(out.take(), (std::vector<Act>{deliver(2), deliver(0), send(4, 0, 0), send(5, 0, 1)}));
  EXPECT_TRUE(two->done());

  auto five = make_multilane(plan, 5);  // tree B: its children are ranks 1, 2
  five->start(out);
  five->on_segment(2, 4, 0, out);
  EXPECT_EQ(out.take(), (std::vector<Act>{deliver(2), send(1, 2, 1), send(2, 2, 0)}));

  // One lane: the same sends, all on lane 0.
  pp.lanes = 1;
  const Plan one(pp);
  auto root1 = make_multilane(one, 0);
  root1->start(out);
  EXPECT_EQ(out.take(), (std::vector<Act>{send(1, 0, 0), send(4, 2, 0), send(1, 1, 0), send(4, 3, 0)}));
}

// Counts the bytes a machine receives per lane, around the real machine.
class LaneTap final : public Machine {
 public:
  LaneTap(std::unique_ptr<Machine> inner, const Plan& plan, std::array<uint64_t, 2>* rx)
      : inner_(std::move(inner)), plan_(plan), rx_(rx) {}
  void start(Actions& out) override { inner_->start(out); }
  void on_segment(SegmentIndex seg, Rank from, Lane lane, Actions& out) override {
    (*rx_)[lane] += plan_.segment(seg).length;
    inner_->on_segment(seg, from, lane, out);
  }
  bool done() const override { return inner_->done(); }

 private:
  std::unique_ptr<Machine> inner_;
  const Plan& plan_;
  std::array<uint64_t, 2>* rx_;
};

struct Case {
  uint32_t p;
  Rank root;
  uint64_t n;
  uint32_t s;
  uint16_t lanes;
  const std::vector<uint32_t>* sites;
  uint64_t seed;
  model::Order order = model::Order::Random;
};

// One checked run with every structural property; false after a failure.
bool check(const Case& c) {
  PlanParams pp;
  pp.nodes = c.p;
  pp.root = c.root;
  pp.lanes = c.lanes;
  pp.message_bytes = c.n;
  pp.segment_bytes = c.s;
  const Plan plan(pp);
  const MultilaneLayout layout(c.p, c.root, *c.sites);
  std::vector<std::array<uint64_t, 2>> rx(c.p, {0, 0});
  model::Options opt;
  opt.seed = c.seed;
  opt.order = c.order;
  const model::Result r = model::run(
      plan,
      [&](Rank me) { return std::make_unique<LaneTap>(make_multilane(plan, me, layout), plan, &rx[me]); },
      opt);
  SCOPED_TRACE(::testing::Message() << "multilane p=" << c.p << " root=" << c.root << " n=" << c.n
                                    << " s=" << c.s << " lanes=" << c.lanes << " sites=" << layout.sites()
                                    << " order=" << order_name(c.order) << " seed=" << c.seed
                                    << " (replay: LANECAST_SEED=" << c.seed << ")");
  EXPECT_TRUE(r.ok) << r.error;
  if (!r.ok) return false;
  const uint32_t m = plan.segments(), split = (m + 1) / 2;
  const uint64_t half_a = std::min<uint64_t>(c.n, uint64_t{split} * c.s), half_b = c.n - half_a;
  // The root sends M bytes: A on lane 0, B on lane 1 (lane 0 only with one lane).
  const model::NodeStats& root = r.nodes[c.root];
  EXPECT_EQ(root.bytes_sent, c.p > 1 ? c.n : 0);
  if (c.p > 1 && c.lanes == 2) {
    EXPECT_EQ(root.lane_bytes_sent[0], half_a);
    EXPECT_EQ(root.lane_bytes_sent[1], half_b);
  }
  uint32_t two_children = 0;
  for (Rank x = 0; x < c.p; ++x) {
    if (x == c.root) continue;
    const model::NodeStats& st = r.nodes[x];
    EXPECT_EQ(st.bytes_received, c.n) << "rank " << x;
    EXPECT_EQ(st.duplicates_received, 0u) << "rank " << x;
    EXPECT_LE(st.bytes_sent, 2 * uint64_t{split} * c.s) << "rank " << x;
    EXPECT_LE(st.peers, 4u) << "rank " << x;
    // Each half on its own lane.
    if (c.lanes == 2) {
      EXPECT_TRUE((rx[x][0] == half_a && rx[x][1] == half_b) || (rx[x][0] == half_b && rx[x][1] == half_a))
          << "rank " << x << " received " << rx[x][0] << " + " << rx[x][1];
    } else {
      EXPECT_EQ(rx[x][0], c.n) << "rank " << x;
    }
    if (st.peers_sent_to == 2) {
      ++two_children;
      const bool both = st.lane_bytes_sent.size() > 1 && st.lane_bytes_sent[0] > 0 && st.lane_bytes_sent[1] > 0;
      // A node forwards one half, or (a chain feeder of an odd site) both.
      if (c.lanes == 2 && m >= 2) {
        EXPECT_TRUE(both) << "rank " << x << " sends to two children on one lane";
      }
    }
  }
  // One site: all but at most two receivers send to two children (the shape
  // test covers several sites, where a one-member site may get both halves
  // from one feeder).
  if (m >= 2 && c.sites->empty()) {
    EXPECT_GE(two_children + 2, c.p - 1);
  }
  return !::testing::Test::HasFailure();
}

// The model executor's sweep: every p, edge sizes, several roots and seeds,
// one and two lanes, one to three sites.
TEST(MultilaneModel, EdgeSizesEveryGroupSize) {
  constexpr uint32_t s = 64;
  for (uint64_t seed : sweep_seeds())
    for (uint32_t p = 1; p <= kMaxNodes; ++p) {
      const auto cases = site_cases(p);
      for (Rank root : sweep_roots(p, seed))
        for (const auto& sites : cases)
          for (uint16_t lanes : {uint16_t{2}, uint16_t{1}})
            for (uint64_t n : {0u, 1u, s - 1, s, s + 1, 2 * s, 3 * s, 5 * s + 3})
              if (!check({p, root, n, s, lanes, &sites, seed})) return;
    }
}

TEST(MultilaneModel, FifoAndLifoOrders) {
  constexpr uint32_t s = 64;
  const uint64_t seed = sweep_seeds().front();
  for (model::Order order : {model::Order::Fifo, model::Order::Lifo})
    for (uint32_t p = 1; p <= kMaxNodes; ++p)
      for (const auto& sites : site_cases(p))
        for (uint64_t n : {1u, s + 1, 7 * s})
          if (!check({p, p / 2, n, s, 2, &sites, seed, order})) return;
}

// Many segments on a few groups, and more lanes than the algorithm uses.
TEST(MultilaneModel, ManySegmentsAndExtraLanes) {
  constexpr uint32_t s = 1024;
  constexpr uint64_t big = (uint64_t{1} << 18) + 7;
  for (uint64_t seed : sweep_seeds())
    for (uint32_t p : {2u, 3u, 5u, 8u, 33u}) {
      for (const auto& sites : site_cases(p))
        if (!check({p, p - 1, big, s, 2, &sites, seed})) return;
      PlanParams pp;
      pp.nodes = p;
      pp.root = 1 % p;
      pp.lanes = 4;
      pp.message_bytes = 9 * s;
      pp.segment_bytes = s;
      const Plan plan(pp);
      const model::Result r = model::run(Algo::Multilane, plan, {.seed = seed});
      ASSERT_TRUE(r.ok) << "p=" << p << " lanes=4 seed=" << seed << ": " << r.error;
      for (Rank x = 0; x < p; ++x) {
        EXPECT_EQ(r.nodes[x].lane_bytes_sent[2], 0u);
        EXPECT_EQ(r.nodes[x].lane_bytes_sent[3], 0u);
      }
    }
}

}  // namespace
}  // namespace lanecast::algos::testing
