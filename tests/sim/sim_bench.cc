// Simulator speed: wall time of one simulated broadcast (default 4096 nodes x
// 64 MiB). A benchmark that prints, never a test that asserts on time.
//   sim_bench [ALGO|toy-chain|toy-linear|toy-binomial] [NODES] [SIZE_MIB] [SEGMENT]
// SIM_NOVALIDATE=1 in the environment turns the per-segment action checks off.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "algos/sim/simulator.h"
#include "tests/sim/toy_machines.h"

using namespace lanecast::algos;

int main(int argc, char** argv) {
  const std::string algo = argc > 1 ? argv[1] : "toy-chain";
  const uint32_t p = argc > 2 ? static_cast<uint32_t>(std::atoi(argv[2])) : 4096;
  const uint64_t mib = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 64;
  const uint32_t seg = argc > 4 ? static_cast<uint32_t>(std::atoi(argv[4])) : 1400;
  PlanParams pp;
  pp.nodes = p;
  pp.message_bytes = mib << 20;
  pp.segment_bytes = seg;
  const Plan plan(pp);
  sim::Network net;
  sim::SimOptions opt;
  opt.validate = std::getenv("SIM_NOVALIDATE") == nullptr;
  const auto t = std::chrono::steady_clock::now();
  sim::SimResult r;
  if (algo == "toy-chain") {
    r = sim::simulate(plan, [&](Rank x) { return std::make_unique<sim::toy::Chain>(plan, x); }, net, opt);
  } else if (algo == "toy-linear") {  // segment-major: the worst case for the tx backlog
    r = sim::simulate(plan, [&](Rank x) { return std::make_unique<sim::toy::Linear>(plan, x, false); }, net, opt);
  } else if (algo == "toy-binomial") {
    r = sim::simulate(plan, [&](Rank x) { return std::make_unique<sim::toy::Binomial>(plan, x); }, net, opt);
  } else {
    const auto id = algo_by_name(algo);
    if (!id) { std::fprintf(stderr, "unknown algorithm %s\n", algo.c_str()); return 2; }
    r = sim::simulate(*id, plan, net, opt);
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  const double frames = double(r.events) / 2;
  std::printf("%-12s p=%u n=%llu MiB s=%u validate=%d: predicted %.3f ms, %llu events, wall %.2f s, %.1f ns/event%s\n",
              algo.c_str(), p, static_cast<unsigned long long>(mib), seg, opt.validate ? 1 : 0,
              double(r.completion) / 1e9, static_cast<unsigned long long>(r.events), wall,
              wall * 1e9 / double(r.events), r.complete ? "" : " INCOMPLETE");
  (void)frames;
  return r.complete ? 0 : 1;
}
