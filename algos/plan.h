// The plan of one broadcast: what every node's machine is built from.
// Computed once per operation from the group and the message; pure arithmetic.
#pragma once

#include <cstdint>
#include <stdexcept>

#include "algos/types.h"

namespace lanecast::algos {

struct Segment {
  SegmentIndex index;
  uint64_t offset;  // byte offset of the segment in the message
  uint32_t length;  // bytes; every segment but the last is segment_bytes long
};

// Settings of a group's algorithms, equal on every member: set once at group
// creation (engine GroupOptions, `lanecast plan` options), never sent per frame.
// Algorithms that do not use a field ignore it.
struct AlgoOptions {
  // mcast_chain (Hoefler, Siebert & Rehm): the root waits this long after its
  // start before it multicasts anything. 0: off.
  uint64_t root_delay_ns = 0;
  // mcast_chain: randomized single-process synchronisation. Nonzero: per
  // operation, mcast_sync_rank(sync_seed, op, p, root) tells the root when it
  // has started, and the root waits for that before it multicasts. 0: off.
  uint64_t sync_seed = 0;
  // mcast_chain: repair on request (mcast_chain.h) - each node asks its
  // predecessor in the ring for the segments it missed, so every link
  // carries each segment about once. false: the paper's ring, every node
  // sending every segment on (twice on every receiver's link).
  bool nack_repair = false;
};

struct PlanParams {
  uint32_t nodes = 1;           // group size p, root included
  Rank root = 0;
  uint16_t lanes = 1;           // lanes per node
  uint64_t message_bytes = 0;   // n
  uint32_t segment_bytes = 1024;  // s: the payload of one frame
  // Which operation of the group this is (the engine's operation id, from 1),
  // equal on every member: what per-operation random choices are drawn from.
  uint64_t op = 0;
  AlgoOptions algo;
};

class Plan {
 public:
  // Throws std::invalid_argument with a readable message on a bad group.
  explicit Plan(const PlanParams& p) : params_(p) {
    if (p.nodes == 0) throw std::invalid_argument("plan: a group needs at least one node");
    if (p.root >= p.nodes) throw std::invalid_argument("plan: root is outside the group");
    if (p.lanes == 0) throw std::invalid_argument("plan: a node needs at least one lane");
    if (p.segment_bytes == 0) throw std::invalid_argument("plan: segment size must be positive");
    const uint64_t n = p.message_bytes;
    const uint64_t count = (n + p.segment_bytes - 1) / p.segment_bytes;
    if (count > UINT32_MAX) throw std::invalid_argument("plan: message has too many segments");
    segments_ = static_cast<uint32_t>(count);
  }

  uint32_t nodes() const { return params_.nodes; }
  Rank root() const { return params_.root; }
  uint16_t lanes() const { return params_.lanes; }
  uint64_t message_bytes() const { return params_.message_bytes; }
  uint32_t segment_bytes() const { return params_.segment_bytes; }
  uint32_t segments() const { return segments_; }  // 0 for an empty message
  const PlanParams& params() const { return params_; }

  Segment segment(SegmentIndex i) const {
    const uint64_t off = static_cast<uint64_t>(i) * params_.segment_bytes;
    const uint64_t left = params_.message_bytes - off;
    const uint32_t len = left < params_.segment_bytes ? static_cast<uint32_t>(left)
                                                      : params_.segment_bytes;
    return Segment{i, off, len};
  }

  // Rank rotation used by rooted algorithms: the root becomes virtual rank 0.
  // Machines call these per segment and per send: a conditional subtraction
  // instead of a division for ranks inside the group (the only ones they pass).
  Rank to_virtual(Rank r) const {
    if (r >= params_.nodes) return static_cast<Rank>((uint64_t{r} + params_.nodes - params_.root) % params_.nodes);
    return r >= params_.root ? r - params_.root : r + params_.nodes - params_.root;
  }
  Rank to_real(Rank v) const {
    if (v >= params_.nodes) return static_cast<Rank>((uint64_t{v} + params_.root) % params_.nodes);
    const Rank gap = params_.nodes - params_.root;  // v + root wraps at nodes
    return v >= gap ? v - gap : v + params_.root;
  }

 private:
  PlanParams params_;
  uint32_t segments_ = 0;
};

}  // namespace lanecast::algos
