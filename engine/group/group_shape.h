// A group's shape as its algorithms use it (algos::GroupShape): each rank's
// site and the hypercube's node order, from a group file's sites and their
// latencies. The same on every member: computed from the group file alone.
#pragma once

#include <cstdint>
#include <vector>

#include "algos/types.h"
#include "lanecast/group_spec.h"

namespace lanecast::engine {

struct GroupShapeData {
  std::vector<algos::Rank> hypercube_order;  // empty: rank order
  std::vector<uint32_t> site_of_rank;        // empty: one site
};

// Empty unless the spec has use_sites and members in two or more sites of its
// site_latency_us. The hypercube's order: Figueira's form-double passes
// (algos/topology/form_hypercube.h) over the members' one-way latencies;
// `lanecast plan --order form-double` predicts the same order.
GroupShapeData shape_of(const GroupSpec& spec);

// The one-way latency (ns) from each member to `me`, as the group file says:
// what a member emulating the sites' distance holds each peer's frames.
std::vector<uint64_t> latency_to_ns(const GroupSpec& spec, uint32_t me);

}  // namespace lanecast::engine
