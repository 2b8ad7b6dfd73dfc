// `lanecast-plan ARGS` == `lanecast plan ARGS`: plan_main on its own, for tests
// and docs while the dispatcher is being wired.
#include <string>
#include <vector>

#include "apps/plan/plan_command.h"

int main(int argc, char** argv) {
  std::vector<char*> args;
  std::string name = "plan";
  args.push_back(name.data());
  for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
  return lanecast::apps::plan_main(static_cast<int>(args.size()), args.data());
}
