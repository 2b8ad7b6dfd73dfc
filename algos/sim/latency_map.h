// Latency between members: the t0 of the linear model per (sender, receiver) pair.
// Sites (islands, clusters of a grid) share one latency inside and another between
// each other; single pairs or a full matrix may override. Read from a small text
// format documented in docs/algorithms.md ("Topology files") with examples in
// config/topologies/. Pure standard library.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "algos/types.h"

namespace lanecast::algos::sim {

using Picos = uint64_t;  // simulated time: integer picoseconds (exact, deterministic)

inline constexpr Picos kPicosPerMicro = 1'000'000;

class LatencyMap {
 public:
  // A uniform network: every pair has latency `t0`.
  explicit LatencyMap(Picos t0 = 0) : default_(t0) {}

  // Parses the text format; throws std::invalid_argument("topology:LINE: ...").
  // `default_t0` is used for pairs the text leaves open when it has no `default`.
  static LatencyMap parse(std::string_view text, Picos default_t0);
  static LatencyMap load(const std::string& path, Picos default_t0);

  // Random islands, as in Figueira's experiments: `nodes` members spread over
  // `islands` islands (every island non-empty), `intra` inside an island, a per
  // island-pair latency drawn uniformly from [inter_min, inter_max] between.
  static LatencyMap random_islands(uint32_t nodes, uint32_t islands, Picos intra, Picos inter_min,
                                 Picos inter_max, uint64_t seed);

  // 0 when the file does not fix the group size (any size fits).
  uint32_t nodes() const { return nodes_; }
  bool uniform() const { return site_of_.empty() && pairs_.empty() && matrix_.empty(); }
  Picos default_latency() const { return default_; }
  void set_default_latency(Picos t0) { default_ = t0; }

  Picos latency(Rank from, Rank to) const {
    if (uniform()) return default_;
    return lookup(from, to);
  }

  // Site of a rank (-1 outside every site), and the site names in file order.
  int site_of(Rank r) const { return r < site_of_.size() ? site_of_[r] : -1; }
  const std::vector<std::string>& site_names() const { return site_names_; }

  // Throws std::invalid_argument when the topology was written for another size.
  void check_fits(uint32_t nodes) const;

  // How uneven the latencies of a group of `nodes` are: the largest over the
  // smallest latency between two distinct members, either direction (`spread`
  // of the auto rules, algos/auto/rules.h). 1 when every pair has the same
  // latency (a uniform network, fewer than two members, all 0); infinity when
  // some pairs have latency 0 and others do not. Visits only the ranks the
  // topology names one by one plus two others (every other rank has the
  // default latency to everyone): cheap for a uniform network of any size.
  // Throws like check_fits when the topology does not fit the group.
  double spread(uint32_t nodes) const;

 private:
  Picos lookup(Rank from, Rank to) const;
  void set_site_latency(int a, int b, Picos t);

  uint32_t nodes_ = 0;
  Picos default_ = 0;
  std::vector<int> site_of_;                // per rank; -1 outside every site
  std::vector<std::string> site_names_;
  std::vector<int64_t> site_latency_;       // sites x sites, -1 = unset
  std::vector<Picos> matrix_;               // nodes x nodes (row = sender), or empty
  std::unordered_map<uint64_t, Picos> pairs_;  // (from << 32 | to) overrides
};

// "50us", "1.5ms", "800ns", "2s", "12" (microseconds when no unit).
// Throws std::invalid_argument naming `what` on bad input.
Picos parse_duration(std::string_view text, std::string_view what);

}  // namespace lanecast::algos::sim
