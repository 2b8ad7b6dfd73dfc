// Process skew: when each rank enters the broadcast (see Network in simulator.h).
#include <random>
#include <stdexcept>
#include <string>

#include "algos/sim/simulator.h"

namespace lanecast::algos::sim {

std::vector<Picos> start_times(const Network& net, uint32_t p, Rank root) {
  if (!net.start_times.empty()) {
    if (net.start_times.size() != p)
      throw std::invalid_argument("network: " + std::to_string(net.start_times.size()) +
                                  " start times for a group of " + std::to_string(p));
    return net.start_times;
  }
  std::vector<Picos> t(p, 0);
  if (net.start_skew == 0) return t;
  // One draw per rank in rank order, the root's discarded: another root leaves
  // every other rank's start time as it was.
  std::mt19937_64 rng(net.skew_seed);
  std::uniform_int_distribution<Picos> skew(0, net.start_skew);
  for (Rank r = 0; r < p; ++r) {
    const Picos x = skew(rng);
    if (r != root) t[r] = x;
  }
  return t;
}

}  // namespace lanecast::algos::sim
