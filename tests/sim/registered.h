// Tests that name an algorithm assert that it is registered: a renamed or
// removed algorithm fails here, loudly, instead of skipping its checks.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "algos/registry.h"

namespace lanecast::test {

// Success when `name` is in algos/registry.cc; else a failure that names it and
// the registered ones. Use as ASSERT_TRUE(registered("bintree")).
inline ::testing::AssertionResult registered(std::string_view name) {
  if (algos::algo_by_name(name)) return ::testing::AssertionSuccess();
  std::string known;
  for (const auto& a : algos::algorithms()) known += " " + std::string(a.name);
  return ::testing::AssertionFailure() << "'" << name
                                       << "' is not a registered algorithm (renamed or removed?); registered:"
                                       << known;
}

}  // namespace lanecast::test
