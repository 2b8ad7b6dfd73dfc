// Plan: segment boundaries, rank rotation, and bad parameters.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>

#include "algos/plan.h"
#include "tests/algos/arena_helpers.h"

namespace lanecast::algos {
namespace {

using testing::plan_of;

TEST(Plan, SegmentCountsAtTheEdges) {
  EXPECT_EQ(plan_of(4, 0, 0, 64).segments(), 0u);
  EXPECT_EQ(plan_of(4, 0, 1, 64).segments(), 1u);
  EXPECT_EQ(plan_of(4, 0, 63, 64).segments(), 1u);
  EXPECT_EQ(plan_of(4, 0, 64, 64).segments(), 1u);
  EXPECT_EQ(plan_of(4, 0, 65, 64).segments(), 2u);
  EXPECT_EQ(plan_of(4, 0, (1u << 20) + 7, 4096).segments(), 257u);
}

TEST(Plan, SegmentsTileTheMessage) {
  for (uint64_t n : {1u, 63u, 64u, 65u, 1000u}) {
    const Plan plan = plan_of(3, 1, n, 64);
    uint64_t next = 0;
    for (SegmentIndex i = 0; i < plan.segments(); ++i) {
      const Segment s = plan.segment(i);
      EXPECT_EQ(s.index, i);
      EXPECT_EQ(s.offset, next);
      EXPECT_GT(s.length, 0u);
      if (i + 1 < plan.segments()) {
        EXPECT_EQ(s.length, 64u);
      }
      next += s.length;
    }
    EXPECT_EQ(next, n);
  }
}

TEST(Plan, LastSegmentIsTheTail) {
  const Plan plan = plan_of(2, 0, 65, 64);
  EXPECT_EQ(plan.segment(1).offset, 64u);
  EXPECT_EQ(plan.segment(1).length, 1u);
}

TEST(Plan, RotationMakesTheRootVirtualZero) {
  for (uint32_t p : {1u, 2u, 7u, 16u})
    for (Rank root = 0; root < p; ++root) {
      const Plan plan = plan_of(p, root, 10, 4);
      EXPECT_EQ(plan.to_virtual(root), 0u);
      EXPECT_EQ(plan.to_real(0), root);
      for (Rank r = 0; r < p; ++r) {
        EXPECT_LT(plan.to_virtual(r), p);
        EXPECT_EQ(plan.to_real(plan.to_virtual(r)), r);
      }
    }
}

TEST(Plan, BadParametersThrow) {
  EXPECT_THROW(plan_of(0, 0, 10, 64), std::invalid_argument);
  EXPECT_THROW(plan_of(4, 4, 10, 64), std::invalid_argument);
  EXPECT_THROW(plan_of(4, 0, 10, 0), std::invalid_argument);
  EXPECT_THROW(plan_of(4, 0, 10, 64, 0), std::invalid_argument);
  EXPECT_THROW(plan_of(4, 0, (uint64_t{UINT32_MAX} + 1) * 2, 1), std::invalid_argument);
  EXPECT_NO_THROW(plan_of(1, 0, 0, 1));
}

}  // namespace
}  // namespace lanecast::algos
