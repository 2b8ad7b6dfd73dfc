#include "engine/group/group_shape.h"

#include <cmath>
#include <set>

#include "algos/topology/form_hypercube.h"

namespace lanecast::engine {

GroupShapeData shape_of(const GroupSpec& spec) {
  GroupShapeData out;
  const uint32_t p = static_cast<uint32_t>(spec.members.size());
  if (!spec.use_sites || spec.site_latency_us.empty() || p < 2) return out;
  std::set<uint32_t> sites;
  for (const MemberSpec& m : spec.members) sites.insert(m.site);
  if (sites.size() < 2) return out;
  for (const MemberSpec& m : spec.members) out.site_of_rank.push_back(m.site);
  std::vector<double> latency(size_t{p} * p, 0.0);
  for (uint32_t a = 0; a < p; ++a)
    for (uint32_t b = 0; b < p; ++b)
      latency[size_t{a} * p + b] = spec.site_latency_us.at(spec.members[a].site).at(spec.members[b].site);
  const auto passes = algos::topology::form_double();
  out.hypercube_order = algos::topology::form_hypercube(p, latency, passes);
  return out;
}

std::vector<uint64_t> latency_to_ns(const GroupSpec& spec, uint32_t me) {
  std::vector<uint64_t> out(spec.members.size(), 0);
  if (spec.site_latency_us.empty()) return out;
  const uint32_t to = spec.members.at(me).site;
  for (size_t r = 0; r < spec.members.size(); ++r)
    out[r] = static_cast<uint64_t>(std::llround(spec.site_latency_us.at(spec.members[r].site).at(to) * 1000.0));
  return out;
}

}  // namespace lanecast::engine
