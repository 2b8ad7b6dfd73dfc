// The skew of one broadcast's completion over its members, as both benches
// (in process and over member processes) report it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace lanecast::apps {

// The receivers' times, fastest first: `rank_us` holds every member's time
// from the root's posting to holding the message, the root's own left out.
inline std::vector<double> receivers_sorted(const std::vector<double>& rank_us, uint32_t root) {
  std::vector<double> v;
  for (uint32_t r = 0; r < rank_us.size(); ++r)
    if (r != root) v.push_back(rank_us[r]);
  std::sort(v.begin(), v.end());
  return v;
}

// slowest - fastest of the receivers' times; 0 when there is no receiver.
inline double spread_of(const std::vector<double>& rank_us, uint32_t root) {
  const std::vector<double> v = receivers_sorted(rank_us, root);
  return v.empty() ? 0 : v.back() - v.front();
}

// (slowest - fastest) / median of the receivers' times. 0 when there is no
// receiver or the median is 0.
inline double skew_of(const std::vector<double>& rank_us, uint32_t root) {
  const std::vector<double> v = receivers_sorted(rank_us, root);
  if (v.empty()) return 0;
  const double median = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  return median > 0 ? (v.back() - v.front()) / median : 0;
}

}  // namespace lanecast::apps
