// Runs `lanecast plan` in-process (plan_main) and captures what it prints.
#pragma once

#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "apps/plan/plan_command.h"

namespace lanecast::test {

struct PlanOutcome {
  int rc;
  std::string out, err;
};

// `args` without the leading "plan".
inline PlanOutcome run_plan(std::vector<std::string> args) {
  args.insert(args.begin(), "plan");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  std::ostringstream out, err;
  auto* old_out = std::cout.rdbuf(out.rdbuf());
  auto* old_err = std::cerr.rdbuf(err.rdbuf());
  const int rc = apps::plan_main(static_cast<int>(argv.size()), argv.data());
  std::cout.rdbuf(old_out);
  std::cerr.rdbuf(old_err);
  return {rc, out.str(), err.str()};
}

}  // namespace lanecast::test
