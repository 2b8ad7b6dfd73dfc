// Träff's circulant schedule (algos/topology/circulant.h) played round by round
// as the paper's model runs it: every rank sends one block and receives one per
// round, a sender must hold what it sends when the round starts, and after
// n - 1 + q rounds every rank holds all n blocks. Checked for every group of
// 2..1100 and a few larger ones, against block counts around the phase
// length, and against the worked example p = 17 in MPICH's circ_graph.c.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "algos/topology/circulant.h"

namespace lanecast::algos::topology {
namespace {

struct Played {
  std::string error;        // empty: every rule held
  uint64_t moves = 0;       // blocks sent, copies included
  uint64_t copies = 0;      // blocks a rank received that it held already
  uint64_t copies_left_out = 0;  // of them, the ones circulant_last_block_round lets a sender skip
};

Played play(uint32_t p, uint32_t n, const std::vector<CirculantSchedule>& sched) {
  Played out;
  const uint32_t q = sched[0].q;
  const CirculantRounds rounds(q, n);
  std::vector<std::vector<bool>> holds(p, std::vector<bool>(n, false));
  std::fill(holds[0].begin(), holds[0].end(), true);
  std::vector<uint64_t> last_round(p, 0);
  for (Rank r = 1; r < p; ++r) last_round[r] = circulant_last_block_round(rounds, sched[r].recv, n);
  auto fail = [&](const std::string& what, uint64_t i, Rank r) {
    if (out.error.empty())
      out.error = what + " (p " + std::to_string(p) + ", n " + std::to_string(n) + ", round " + std::to_string(i) +
                  ", rank " + std::to_string(r) + ")";
  };
  struct Move { Rank to; uint32_t block; bool copy_expected; };
  std::vector<Move> moves;
  for (uint64_t i = rounds.first; i < rounds.end; ++i) {
    const uint32_t k = rounds.k(i);
    moves.clear();
    for (Rank r = 0; r < p; ++r) {
      const Rank to = static_cast<Rank>((uint64_t{r} + sched[r].skip[k]) % p);
      if (to == 0) continue;
      const int64_t sent = rounds.block(sched[r].send[k], i);
      const int64_t taken = rounds.block(sched[to].recv[k], i);
      if (sent != taken) fail("send and receive name different blocks", i, r);
      if (sent < 0) continue;
      const uint32_t block = static_cast<uint32_t>(std::min<int64_t>(sent, n - 1));
      if (!holds[r][block]) fail("a rank sends a block it does not hold", i, r);
      moves.push_back({to, block, sent >= n - 1 && i > last_round[to]});
    }
    for (const Move& m : moves) {  // the round's arrivals, after its sends
      ++out.moves;
      if (holds[m.to][m.block]) {
        ++out.copies;
        if (m.copy_expected) ++out.copies_left_out;
        else fail("a copy that circulant_last_block_round does not foresee", i, m.to);
      } else if (m.copy_expected) {
        fail("circulant_last_block_round leaves out a block the rank lacks", i, m.to);
      }
      holds[m.to][m.block] = true;
    }
  }
  for (Rank r = 1; r < p; ++r)
    if (std::find(holds[r].begin(), holds[r].end(), false) != holds[r].end()) fail("a rank lacks a block", rounds.end, r);
  return out;
}

std::vector<CirculantSchedule> schedules(uint32_t p) {
  std::vector<CirculantSchedule> s;
  for (Rank r = 0; r < p; ++r) s.push_back(circulant_schedule(p, r));
  return s;
}

void check_group(uint32_t p, std::initializer_list<uint32_t> ns) {
  const auto sched = schedules(p);
  const uint32_t q = sched[0].q;
  ASSERT_EQ(q, circulant_phase(p));
  ASSERT_EQ(sched[0].skip[0], 1u);
  ASSERT_EQ(sched[0].skip[q], p);
  for (uint32_t k = 0; k < q; ++k) ASSERT_EQ(sched[0].send[k], static_cast<int32_t>(k)) << "p " << p;
  for (uint32_t n : ns) {
    const Played got = play(p, n, sched);
    ASSERT_EQ(got.error, "");
    // Every copy is one the sender can leave out: what remains is n blocks
    // to each of p - 1 ranks, nothing more.
    ASSERT_EQ(got.moves - got.copies_left_out, uint64_t{n} * (p - 1)) << "p " << p << " n " << n;
  }
}

TEST(CirculantSchedule, EveryGroupUpTo1100) {
  for (uint32_t p = 2; p <= 1100; ++p) {
    const uint32_t q = circulant_phase(p);
    if (p <= 200)
      check_group(p, {1, 2, 3, q - 1 > 0 ? q - 1 : 1, q, q + 1, 2 * q + 3, 41});
    else
      check_group(p, {1, q + 2});
    if (HasFatalFailure()) return;
  }
}

TEST(CirculantSchedule, LargerGroups) {
  for (uint32_t p : {2047u, 2048u, 2049u, 3000u, 4095u, 4096u, 4097u, 6001u})
    check_group(p, {1, circulant_phase(p) + 3});
}

// p = 17, q = 5: the example table in MPICH's circ_graph.c, columns of ranks
// 0, 1, 4, 8, 16 (receive rows R[0..4], send rows S[0..4]).
TEST(CirculantSchedule, MatchesTheReferenceExample) {
  const auto s = schedules(17);
  EXPECT_EQ(s[0].q, 5u);
  const std::array<uint32_t, 6> skips{1, 2, 3, 5, 9, 17};
  for (uint32_t k = 0; k <= 5; ++k) EXPECT_EQ(s[0].skip[k], skips[k]);
  struct Column { Rank r; std::array<int32_t, 5> recv, send; };
  const Column cols[] = {
      {1, {0, -4, -2, -3, -1}, {-5, -5, 0, 0, 0}},
      {4, {-3, -4, 0, -2, -1}, {-5, -3, -3, -5, 0}},
      {8, {-4, -5, -2, 2, -1}, {-3, -3, -3, -2, -3}},
      {16, {-5, -2, -3, -1, 1}, {-4, -4, -2, -2, -1}},
  };
  for (const Column& c : cols)
    for (uint32_t k = 0; k < 5; ++k) {
      EXPECT_EQ(s[c.r].recv[k], c.recv[k]) << "rank " << c.r << " round " << k;
      // A send to the root is never made; the table's entry there is not ours.
      if ((c.r + s[0].skip[k]) % 17 != 0) {
        EXPECT_EQ(s[c.r].send[k], c.send[k]) << "rank " << c.r << " round " << k;
      }
    }
}

TEST(CirculantSchedule, OneAndTwoRanks) {
  EXPECT_EQ(circulant_schedule(1, 0).q, 0u);
  const auto two = schedules(2);
  EXPECT_EQ(two[0].q, 1u);
  EXPECT_EQ(two[1].recv[0], 0);
  const Played got = play(2, 5, two);
  EXPECT_EQ(got.error, "");
  EXPECT_EQ(got.moves, 5u);
  EXPECT_THROW(circulant_schedule(0, 0), std::invalid_argument);
  EXPECT_THROW(circulant_schedule(4, 4), std::invalid_argument);
}

}  // namespace
}  // namespace lanecast::algos::topology
