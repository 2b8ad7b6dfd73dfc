// Shared driver of the model-executor sweeps: seeds (overridable with the
// environment variable LANECAST_SEED), roots, and one checked run with the
// replay line in its trace.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <ostream>
#include <string>
#include <vector>

#include "algos/model/model.h"
#include "algos/registry.h"

namespace lanecast::algos {
// gtest prints a parameter with this, not as raw bytes.
inline void PrintTo(Algo a, std::ostream* os) { *os << algo_info(a).name; }
}  // namespace lanecast::algos

namespace lanecast::algos::testing {

// The seeds of every sweep: LANECAST_SEED if set, else a fixed few.
inline std::vector<uint64_t> sweep_seeds() {
  if (const char* s = std::getenv("LANECAST_SEED"); s && *s) return {std::strtoull(s, nullptr, 0)};
  return {1, 2, 0x9e3779b97f4a7c15ull};
}

// 0, p-1, p/2 and one derived from the seed (duplicates removed).
inline std::vector<Rank> sweep_roots(uint32_t p, uint64_t seed) {
  std::vector<Rank> out;
  const Rank mixed = static_cast<Rank>((seed * 0x9e3779b97f4a7c15ull >> 33) % p);
  for (Rank r : {Rank{0}, p - 1, p / 2, mixed})
    if (std::find(out.begin(), out.end(), r) == out.end()) out.push_back(r);
  return out;
}

inline const char* order_name(model::Order o) {
  return o == model::Order::Fifo ? "fifo" : o == model::Order::Lifo ? "lifo" : "random";
}

// One run; false (with a test failure naming the replay) when it fails.
inline bool check_run(Algo algo, uint32_t p, Rank root, uint64_t n, uint32_t s, uint64_t seed,
                      model::Order order = model::Order::Random, model::Result* out = nullptr) {
  PlanParams pp;
  pp.nodes = p;
  pp.root = root;
  pp.message_bytes = n;
  pp.segment_bytes = s;
  const Plan plan(pp);
  model::Options opt;
  opt.seed = seed;
  opt.order = order;
  model::Result r = model::run(algo, plan, opt);
  if (!r.ok) {
    ADD_FAILURE() << algo_info(algo).name << " p=" << p << " root=" << root << " n=" << n
                  << " s=" << s << " order=" << order_name(order) << " seed=" << seed
                  << " (replay: LANECAST_SEED=" << seed << ")\n  " << r.error;
    return false;
  }
  if (out) *out = std::move(r);
  return true;
}

}  // namespace lanecast::algos::testing
