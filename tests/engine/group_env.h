// Shared pieces of the suites that run whole groups through the public API:
// one Engine per test binary (EAL starts once per process), the seed every
// random choice derives from (printed, replayable with LANECAST_SEED), and a
// collective broadcast on every member.
#pragma once

#include <cstdlib>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "lanecast/lanecast.h"

namespace lanecast::test {

inline Engine& engine() {
  static Engine e([] {
    EngineOptions o;
    o.memory_mb = 2048;
    o.polling_cores = 2;
    return o;
  }());
  return e;
}

inline uint64_t test_seed() {
  if (const char* s = std::getenv("LANECAST_SEED")) return std::strtoull(s, nullptr, 10);
  return 20261122;
}

inline void fill(std::vector<std::byte>& b, std::mt19937_64& rng) {
  for (auto& x : b) x = static_cast<std::byte>(rng());
}

// Runs one broadcast on every member; returns the statuses' messages joined.
inline std::string broadcast_all(LocalGroup& g, Rank root, std::vector<std::vector<std::byte>>& bufs,
                                 std::string_view algo = {}) {
  std::vector<Completion> done;
  for (Rank r = 0; r < g.size(); ++r) done.push_back(g.member(r).broadcast(root, bufs[r], algo));
  std::string errors;
  for (auto& d : done) {
    Status s = d.wait();
    if (!s.ok()) errors += s.message + "; ";
  }
  return errors;
}

// Every member's bytes equal the root's.
inline bool verified(const std::vector<std::vector<std::byte>>& bufs, Rank root) {
  for (const auto& b : bufs)
    if (b != bufs[root]) return false;
  return true;
}

}  // namespace lanecast::test
